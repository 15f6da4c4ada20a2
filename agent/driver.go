package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/agent/acp"
	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// Kinds of agent process (Options.Kind).
const (
	KindClaude = "claude"
	KindACP    = "acp"
)

// This file is the seam between a Session's process and the protocol it
// speaks. A Session of kind claude speaks stream-json itself (session*.go,
// unchanged); one of kind acp hands each stdout line to an acp.Client and
// writes the lines the client queues, from pumpACP, so the reader never
// waits on stdin. The client's events go through Session.handle like the
// CLI's, so the turn state, Busy, the pool and the core see no difference.
// Everything about the process — environment, sandbox, egress, cgroup,
// limits, Stop, the Exit — is the same code for both kinds.

// isACP reports whether opts (normalized) is an ACP agent.
func (opts Options) isACP() bool { return opts.Kind == KindACP }

// acpDir is where the bridge keeps an ACP agent's session id: inside the
// session's state directory, read-only in the sandbox (the agent must not
// point a later resume at another session).
func acpDir(opts Options) string { return filepath.Join(opts.StateDir, "acp") }

// acpHome is an ACP agent's HOME when the profile sets none: private to
// the session and kept with it, so the agent's own session store (under
// HOME) is there for session/load after a restart. With replicas the
// store carries it and the acpDir record to the next replica (package
// sessiondir names both: ACPHome, ACPDir, ACPRecord — keep them equal).
func acpHome(opts Options) string { return filepath.Join(opts.StateDir, "home") }

// acpSessionFile holds the agent's session id of the bridge session.
func acpSessionFile(opts Options) string { return filepath.Join(acpDir(opts), "session") }

// acpCostFile holds the agent's cumulative cost of the session already
// counted in turns (for an agent that reports a cost), so that a resumed
// session does not count it again.
func acpCostFile(opts Options) string { return filepath.Join(acpDir(opts), "cost") }

// newACPClient makes the ACP client of s (kind acp), which emits its events
// through s.handle, offers the agent tools (the stdio MCP servers of
// listenACPTools) and records the agent's session id for a resume.
func (s *Session) newACPClient(tools []acp.StdioServer) *acp.Client {
	opts := s.opts
	cfg := acp.Config{SessionID: opts.SessionID, CWD: opts.Workdir, Resume: opts.Resume, Emit: s.handle, Log: s.log,
		Mode: opts.PermissionMode, Model: opts.Model, MCPServers: tools}
	for k, v := range opts.Env {
		if v != "" { // an empty value removes the variable (Options)
			cfg.EnvVars = append(cfg.EnvVars, k)
		}
	}
	if opts.StateDir != "" {
		if opts.Resume {
			if b, err := os.ReadFile(acpSessionFile(opts)); err == nil {
				cfg.LoadID = strings.TrimSpace(string(b))
			}
			if b, err := os.ReadFile(acpCostFile(opts)); err == nil {
				cfg.BilledCost, _ = strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
			}
		}
		cfg.OnBilled = func(cost float64) {
			if err := os.WriteFile(acpCostFile(opts), []byte(strconv.FormatFloat(cost, 'g', -1, 64)+"\n"), 0o600); err != nil {
				s.log.Warn("agent cost not saved: a resumed session may count its earlier cost again", "err", err)
			}
		}
		cfg.OnSession = func(id string) {
			if err := os.WriteFile(acpSessionFile(opts), []byte(id+"\n"), 0o600); err != nil {
				s.log.Warn("agent session id not saved: this conversation cannot be resumed", "err", err)
			}
		}
	}
	return acp.New(cfg)
}

// pumpACP writes the lines the ACP client queues, in order, until stdin
// is closed or fails; it closes s.booted when the ACP session is set up.
func (s *Session) pumpACP() {
	ready := s.acp.Ready()
	for {
		select {
		case <-s.acp.Wake():
			for _, l := range s.acp.Take() {
				if err := s.write(context.Background(), l); err != nil {
					if !errors.Is(err, ErrClosed) {
						s.log.Warn("agent stdin write failed", "err", err)
					}
					return
				}
			}
		case <-ready:
			ready = nil
			s.bootedOnce.Do(func() { close(s.booted) })
		case <-s.writerDone:
			return
		}
	}
}

// acpUnsupported is the error of a control request an ACP agent has no
// equivalent for.
func acpUnsupported(request string) error {
	return &ControlError{Request: request, Message: "not available for agents of kind acp (the Agent Client Protocol has no such request)"}
}

// initializeACP waits until the ACP session is set up (initialize and
// session/new or session/load answered), at most Options.ControlTimeout.
func (s *Session) initializeACP(ctx context.Context) error {
	timer := time.NewTimer(s.opts.ControlTimeout)
	defer timer.Stop()
	select {
	case <-s.acp.Ready():
		if err := s.acp.Err(); err != nil {
			return fmt.Errorf("agent %s initialize: %w", s.opts.SessionID, err)
		}
		return nil
	case <-timer.C:
		return fmt.Errorf("agent %s initialize after %s: %w", s.opts.SessionID, s.opts.ControlTimeout, ErrControlTimeout)
	case <-ctx.Done():
		return fmt.Errorf("agent %s initialize: %w", s.opts.SessionID, ctx.Err())
	case <-s.exited:
		return fmt.Errorf("agent %s initialize: %w", s.opts.SessionID, ErrClosed)
	}
}

// readACP reads stdout lines into the ACP client until EOF.
func (s *Session) readACP() {
	s.readLines(func(line []byte) {
		if len(strings.TrimSpace(string(line))) > 0 {
			s.acp.Handle(line)
		}
	})
}

// sendACP is Send for kind acp: the client sends the message as a prompt,
// or queues it for the next one.
func (s *Session) sendACP(m streamjson.UserMessage) error {
	s.mu.Lock()
	if s.closing || s.st.exited {
		s.mu.Unlock()
		return fmt.Errorf("send to agent %s: %w", s.opts.SessionID, ErrClosed)
	}
	s.st.sent(m.UUID)
	s.mu.Unlock()
	if err := s.acp.Send(m); err != nil {
		s.mu.Lock()
		s.st.unsent(m.UUID)
		s.mu.Unlock()
		s.changed()
		return fmt.Errorf("send to agent %s: %w", s.opts.SessionID, err)
	}
	s.log.Debug("agent message sent", "uuid", m.UUID, "images", len(m.Images))
	return nil
}

// interruptACP is Interrupt for kind acp: session/cancel for the running
// prompt (nothing to do when none runs).
func (s *Session) interruptACP() error {
	s.mu.Lock()
	closed := s.closing || s.st.exited
	s.mu.Unlock()
	if closed {
		return fmt.Errorf("agent %s interrupt: %w", s.opts.SessionID, ErrClosed)
	}
	if s.acp.Cancel() {
		s.log.Info("agent prompt cancelled")
	}
	return nil
}

// Offered is what an agent of kind acp offers of kind (acp.KindMode or
// acp.KindModel) for its session, and the agent's own choice when the
// session was set up; ok is false for a Claude Code CLI (its modes and
// models are the CLI's fixed ones).
func (s *Session) Offered(kind string) (o acp.Offer, initial string, ok bool) {
	if s.acp == nil {
		return acp.Offer{}, "", false
	}
	o, initial = s.acp.Offered(kind)
	return o, initial, true
}

// chooseACP is SetModel and SetPermissionMode for kind acp: it asks the
// agent to switch to id, one of the choices it offers ("default" the one
// it chose itself, unless it offers a choice of that name), and waits
// for its answer, at most Options.ControlTimeout. An agent that offers
// no such choice, an unknown id and the agent's refusal are a
// *ControlError.
func (s *Session) chooseACP(ctx context.Context, kind, id string) error {
	request := "set_" + kind
	if o, initial := s.acp.Offered(kind); id == "default" && !o.Has(id) && initial != "" {
		id = initial
	}
	done, err := s.acp.Choose(kind, id)
	switch {
	case errors.Is(err, acp.ErrNotOffered):
		return &ControlError{Request: request, Message: "this agent offers no " + kind + " to choose (it advertised none for its session)"}
	case err != nil:
		return &ControlError{Request: request, Message: err.Error()}
	}
	timer := time.NewTimer(s.opts.ControlTimeout)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			return &ControlError{Request: request, Message: err.Error()}
		}
		s.log.Info("agent "+kind+" switched", "id", id)
		return nil
	case <-timer.C:
		return fmt.Errorf("agent %s %s after %s: %w", s.opts.SessionID, request, s.opts.ControlTimeout, ErrControlTimeout)
	case <-ctx.Done():
		return fmt.Errorf("agent %s %s: %w", s.opts.SessionID, request, ctx.Err())
	case <-s.exited:
		return fmt.Errorf("agent %s %s: %w", s.opts.SessionID, request, ErrClosed)
	}
}
