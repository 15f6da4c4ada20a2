package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/agent/acp"
	"github.com/agentbridge/agentbridge/agent/eventqueue"
	"github.com/agentbridge/agentbridge/agent/mcprelay"
	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// stdoutDrainGrace is how long the reader may keep reading stdout after the
// process exited (a child that inherited stdout can hold it open) before the
// pipe is closed under it.
const stdoutDrainGrace = 2 * time.Second

// waitDelay bounds how long exec.Cmd.Wait waits for stderr to close after
// the process exited or was killed (exec.Cmd.WaitDelay).
const waitDelay = 2 * time.Second

// Session is one running Claude Code CLI process in stream-json mode: a
// persistent conversation whose stdin stays open, so messages can be sent at
// any time (mid-turn, during background tasks, after CLI-initiated turns).
//
// All methods are safe for concurrent use. Events must be drained by the
// caller until the channel is closed (after the Exit event); the session
// buffers meanwhile, so its stdout reader never stalls, up to a bound (see
// EventsDropped): past it streaming pieces are merged or dropped, and a
// consumer that still does not keep up gets the process killed (an
// unexpected Exit) rather than unbounded memory.
type Session struct {
	log  *slog.Logger
	opts Options // normalized
	cmd  *exec.Cmd
	pid  int
	// started is when the process was spawned (Pool.Snapshot).
	started time.Time

	tmpDir string      // created by Start, removed after exit ("" if Env set TMPDIR)
	egress *egressLink // the process's egress gate, closed after exit (nil = not proxied)
	stdin  *os.File
	stdout *os.File
	stderr *tailBuffer

	writes     chan writeReq
	writerDone chan struct{} // closed when the writer goroutine returned
	exited     chan struct{} // closed when cmd.Wait returned
	done       chan struct{} // closed after the Exit event was queued
	booted     chan struct{} // closed at the CLI's first init or control response (bootedOnce)
	bootedOnce sync.Once
	kill       context.CancelFunc
	events     *eventqueue.Queue
	nextReq    atomic.Int64
	wg         sync.WaitGroup

	mu       sync.Mutex
	st       turnState
	controls map[string]chan streamjson.ControlResponse // host request id → waiter
	closing  bool                                       // Close/stop began: no more writes accepted
	reason   string                                     // why the host stopped it ("closed", "idle", "evicted")
	onChange func()                                     // set by Pool; called without mu after state changes

	limits     limitWatch    // the agent's cgroup (session_limits.go); cg nil = none
	limitsDone chan struct{} // closed when watchLimits returned

	acp       *acp.Client   // the protocol of a kind acp agent (driver.go); nil = stream-json
	toolSocks *mcprelay.Set // an ACP agent's way to Options.MCPServers (acp_tools.go)
}

// writeReq is one line for the writer goroutine; closeStdin instead closes
// stdin after every earlier line was written.
type writeReq struct {
	line       []byte
	closeStdin bool
	done       chan error // capacity 1
}

// Start spawns the CLI for opts and returns at once; it does not wait for
// the CLI to print anything (it prints nothing before the first message).
// ctx bounds only the start: the process lives until Close or until it
// exits by itself (Exit event). Start creates Workdir (and Home, if set)
// when missing.
func Start(ctx context.Context, opts Options, logger *slog.Logger) (*Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start agent: %w", err)
	}
	if prepare := opts.Prepare; prepare != nil {
		opts.Prepare = nil
		prepared, err := prepare(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("start agent %s: prepare: %w", opts.SessionID, err)
		}
		opts = prepared
	}
	opts, err := opts.Normalized()
	if err != nil {
		return nil, fmt.Errorf("start agent: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := prepareDirs(opts); err != nil {
		return nil, fmt.Errorf("start agent: %w", err)
	}
	tmpDir := ""
	if _, set := opts.Env["TMPDIR"]; !set {
		// Short names: sockets the agent makes in its TMPDIR need paths
		// under 108 bytes.
		prefix := "agentbridge-agent-"
		if opts.TempRoot != "" {
			prefix = "agent-"
		}
		if tmpDir, err = os.MkdirTemp(opts.TempRoot, prefix); err != nil {
			return nil, fmt.Errorf("start agent: create TMPDIR: %w", err)
		}
	}
	link, err := openEgress(opts) // network.go; nil unless proxied
	if err != nil {
		if tmpDir != "" {
			_ = os.RemoveAll(tmpDir)
		}
		return nil, fmt.Errorf("start agent %s: network: %w", opts.SessionID, err)
	}
	s, err := spawn(opts, tmpDir, link, logger)
	if err != nil {
		link.close()
		if tmpDir != "" {
			_ = os.RemoveAll(tmpDir)
		}
		return nil, fmt.Errorf("start agent %s: %w", opts.SessionID, err)
	}
	return s, nil
}

// spawn starts the process and the session's goroutines.
func spawn(opts Options, tmpDir string, link *egressLink, logger *slog.Logger) (*Session, error) {
	p, err := startCLI(opts, tmpDir, link, logger)
	if err != nil {
		return nil, err
	}
	cmd, cg := p.cmd, p.cg
	s := &Session{
		opts:       opts,
		cmd:        cmd,
		pid:        cmd.Process.Pid,
		started:    time.Now(),
		tmpDir:     tmpDir,
		egress:     link,
		stdin:      p.stdin,
		stdout:     p.stdout,
		stderr:     p.stderr,
		writes:     make(chan writeReq),
		writerDone: make(chan struct{}),
		exited:     make(chan struct{}),
		done:       make(chan struct{}),
		booted:     make(chan struct{}),
		kill:       p.kill,
		events:     eventqueue.New(),
		controls:   map[string]chan streamjson.ControlResponse{},
		st:         newTurnState(),
		limits:     limitWatch{cg: cg},
		limitsDone: make(chan struct{}),
	}
	s.log = logger.With("session", opts.SessionID, "pid", s.pid)
	s.log.Info("agent started", "resume", opts.Resume, "workdir", opts.Workdir, "model", opts.Model,
		"permission_mode", opts.PermissionMode, "sandbox", opts.Sandbox.Name())
	s.events.SetOnOverflow(func(err error) {
		s.log.Error("agent stopped: its events were not read in time", "err", err)
		s.kill() // like a crash: the Exit is unexpected, so the host delivers the interrupted message again
	})
	if opts.isACP() {
		var tools []acp.StdioServer
		s.toolSocks, tools = listenACPTools(opts, s.log)
		s.acp = s.newACPClient(append(tools, stdioACPServers(opts)...))
	}
	s.startLoops()
	if s.acp != nil {
		s.acp.Start()
	} else if len(opts.MCPServers) > 0 {
		if err := s.startMCP(); err != nil {
			s.kill()
			<-s.done
			return nil, err
		}
	}
	return s, nil
}

// startLoops starts the session's goroutines, which s.wg waits for: the
// cgroup's watch (when it has counters), the event queue, the stdin
// writer, the stdout reader and the process's wait.
func (s *Session) startLoops() {
	readerDone := make(chan struct{})
	if len(s.limits.cg.Dirs()) > 0 { // a cgroup with counters to watch
		s.wg.Add(1)
		go func() { defer s.wg.Done(); defer close(s.limitsDone); s.watchLimits() }()
	} else {
		close(s.limitsDone)
	}
	s.wg.Add(4)
	go func() { defer s.wg.Done(); s.events.Run() }()
	go func() { defer s.wg.Done(); s.writeLoop() }()
	go func() { defer s.wg.Done(); defer close(readerDone); s.readLoop() }()
	go func() { defer s.wg.Done(); s.waitLoop(readerDone) }()
	if s.acp != nil {
		s.wg.Add(1)
		go func() { defer s.wg.Done(); s.pumpACP() }()
	}
}

// killGroup SIGKILLs the process group of cmd (the CLI and its children).
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// SessionID returns the Claude session id (the one passed with --session-id
// or --resume).
func (s *Session) SessionID() string { return s.opts.SessionID }

// PID returns the CLI's process id.
func (s *Session) PID() int { return s.pid }

// Events returns the session's event stream (always the same channel). It
// is closed right after the Exit event. The consumer must drain it until
// it is closed; events are queued until then, within the bounds described
// on Session.
func (s *Session) Events() <-chan streamjson.Event { return s.events.Out() }

// Done is closed once the process has exited and its Exit event is queued.
func (s *Session) Done() <-chan struct{} { return s.done }

// Alive reports whether the process is running and the host has not begun
// to stop it.
func (s *Session) Alive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.closing && !s.st.exited
}

// Busy reports whether the agent is working: a sent message has not been
// completed or cancelled, a turn is running (including turns the CLI starts
// itself), a permission request waits for an answer, or a background task
// runs. A busy session is never stopped for idleness or eviction.
func (s *Session) Busy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.busy()
}

// FirstTurnDone reports whether a message has been sent to the session
// and it is no longer busy, or it has exited.
func (s *Session) FirstTurnDone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.exited || (s.st.everSent && !s.st.busy())
}

// LastActive returns when the session last sent or received anything.
func (s *Session) LastActive() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.lastActive
}

// PendingPermissions returns the ids of the permission requests waiting
// for Respond.
func (s *Session) PendingPermissions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.pendingPermissionIDs()
}

// Send writes a user message to the CLI and returns once it is written; it
// never waits for the turn. Messages sent while a turn runs are queued or
// folded in by the CLI; Lifecycle events with m.UUID report what happened
// to it. An empty m.UUID is replaced by a random one (then the receipts
// cannot be matched by the caller). If ctx ends while the line is being
// written, Send returns ctx's error and the message may still arrive.
// Send fails with ErrClosed once the process exited or a stop began (Close,
// or the pool stopping an idle session): wait for the Exit event, then
// acquire a new (resumed) session.
func (s *Session) Send(ctx context.Context, m streamjson.UserMessage) error {
	if m.UUID == "" {
		m.UUID = uuid.NewString()
	}
	if s.acp != nil {
		return s.sendACP(m)
	}
	line, err := streamjson.EncodeUserMessage(m)
	if err != nil {
		return fmt.Errorf("send to agent %s: %w", s.opts.SessionID, err)
	}
	s.mu.Lock()
	if s.closing || s.st.exited {
		s.mu.Unlock()
		return fmt.Errorf("send to agent %s: %w", s.opts.SessionID, ErrClosed)
	}
	s.st.sent(m.UUID)
	s.mu.Unlock()
	if err := s.write(ctx, line); err != nil {
		s.mu.Lock()
		s.st.unsent(m.UUID)
		s.mu.Unlock()
		s.changed()
		return fmt.Errorf("send to agent %s: %w", s.opts.SessionID, err)
	}
	s.log.Debug("agent message sent", "uuid", m.UUID, "bytes", len(line), "images", len(m.Images))
	return nil
}

// Respond answers the pending permission request requestID. Allow without
// UpdatedInput sends the request's original input; a deny without Message
// gets a generic one. It returns ErrNotPending when the request was already
// answered, cancelled by the CLI (PermissionCancelled) or never existed.
func (s *Session) Respond(ctx context.Context, requestID string, d streamjson.Decision) error {
	s.mu.Lock()
	input, ok := s.st.takePermission(requestID)
	exited := s.st.exited
	s.mu.Unlock()
	if !ok {
		if exited {
			return fmt.Errorf("respond to %s: %w", requestID, ErrClosed)
		}
		return fmt.Errorf("respond to %s: %w", requestID, ErrNotPending)
	}
	s.changed()
	if s.acp != nil {
		if err := s.acp.Respond(requestID, d); err != nil {
			s.restorePermission(requestID, input)
			return fmt.Errorf("respond to %s: %w", requestID, err)
		}
		s.log.Info("agent permission answered", "request", requestID, "allow", d.Allow, "interrupt", d.Interrupt,
			"always", len(d.UpdatedPermissions) > 0)
		return nil
	}
	line, err := streamjson.EncodePermission(requestID, input, d)
	if err != nil {
		s.restorePermission(requestID, input)
		return fmt.Errorf("respond to %s: %w", requestID, err)
	}
	if err := s.write(ctx, line); err != nil {
		s.restorePermission(requestID, input)
		return fmt.Errorf("respond to %s: %w", requestID, err)
	}
	s.log.Info("agent permission answered", "request", requestID, "allow", d.Allow, "interrupt", d.Interrupt,
		"updated_input", d.UpdatedInput != nil, "updated_permissions", len(d.UpdatedPermissions))
	return nil
}

// restorePermission puts back a request whose answer could not be written.
func (s *Session) restorePermission(requestID string, input []byte) {
	s.mu.Lock()
	if !s.st.exited {
		s.st.perms[requestID] = input
	}
	s.mu.Unlock()
	s.changed()
}

// Interrupt asks the CLI to stop the running turn (like pressing Esc): the
// turn ends with an error Result and pending permissions are cancelled.
// It waits for the CLI's acknowledgement (Options.ControlTimeout).
func (s *Session) Interrupt(ctx context.Context) error {
	if s.acp != nil {
		return s.interruptACP()
	}
	_, err := s.control(ctx, "interrupt", streamjson.EncodeInterrupt)
	return err
}

// SetModel switches the model for the following turns. For kind acp it
// is one of the models the agent offers ("default": the one it chose
// itself), see chooseACP.
func (s *Session) SetModel(ctx context.Context, model string) error {
	if s.acp != nil {
		return s.chooseACP(ctx, acp.KindModel, model)
	}
	_, err := s.control(ctx, "set_model", func(id string) ([]byte, error) { return streamjson.EncodeSetModel(id, model) })
	return err
}

// SetPermissionMode switches the permission mode (default, acceptEdits,
// plan, ...). The CLI refuses unknown modes, and bypassPermissions unless
// the session was started with it: the refusal is a *ControlError.
// For kind acp the mode is one of the modes the agent offers (see
// chooseACP).
func (s *Session) SetPermissionMode(ctx context.Context, mode string) error {
	if s.acp != nil {
		return s.chooseACP(ctx, acp.KindMode, mode)
	}
	_, err := s.control(ctx, "set_permission_mode", func(id string) ([]byte, error) { return streamjson.EncodeSetPermissionMode(id, mode) })
	return err
}

// control sends a host control request and waits for its control_response.
func (s *Session) control(ctx context.Context, subtype string, encode func(id string) ([]byte, error)) (streamjson.ControlResponse, error) {
	id := fmt.Sprintf("host-%d", s.nextReq.Add(1))
	line, err := encode(id)
	if err != nil {
		return streamjson.ControlResponse{}, fmt.Errorf("agent %s %s: %w", s.opts.SessionID, subtype, err)
	}
	ch := make(chan streamjson.ControlResponse, 1)
	s.mu.Lock()
	if s.closing || s.st.exited {
		s.mu.Unlock()
		return streamjson.ControlResponse{}, fmt.Errorf("agent %s %s: %w", s.opts.SessionID, subtype, ErrClosed)
	}
	s.controls[id] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.controls, id)
		s.mu.Unlock()
	}()
	if err := s.write(ctx, line); err != nil {
		return streamjson.ControlResponse{}, fmt.Errorf("agent %s %s: %w", s.opts.SessionID, subtype, err)
	}
	wait := s.controlTimeout()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case r := <-ch:
		if r.Subtype != "success" {
			return r, &ControlError{Request: subtype, Message: r.Error, Code: r.ErrorCode}
		}
		s.log.Debug("agent control request answered", "subtype", subtype, "request", id)
		return r, nil
	case <-timer.C:
		return streamjson.ControlResponse{}, fmt.Errorf("agent %s %s after %s: %w", s.opts.SessionID, subtype, wait, ErrControlTimeout)
	case <-ctx.Done():
		return streamjson.ControlResponse{}, fmt.Errorf("agent %s %s: %w", s.opts.SessionID, subtype, ctx.Err())
	case <-s.exited:
		return streamjson.ControlResponse{}, fmt.Errorf("agent %s %s: %w", s.opts.SessionID, subtype, ErrClosed)
	}
}

// write hands line to the writer goroutine and waits until it is written.
func (s *Session) write(ctx context.Context, line []byte) error {
	req := writeReq{line: line, done: make(chan error, 1)}
	select {
	case s.writes <- req:
	case <-s.writerDone:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// writeLoop is the only writer of stdin: lines never interleave. It ends
// when stdin is closed on request, a write fails, or the process exited.
func (s *Session) writeLoop() {
	defer close(s.writerDone)
	defer s.stdin.Close()
	for {
		select {
		case req := <-s.writes:
			if req.closeStdin {
				req.done <- nil
				return
			}
			_, err := s.stdin.Write(req.line)
			switch {
			case errors.Is(err, syscall.EPIPE):
				// The process closed its stdin: it exited or is exiting.
				// ErrClosed lets callers wait for its exit, which tells why
				// (its code and stderr), instead of reporting the pipe.
				err = fmt.Errorf("write agent stdin: %w (%w)", ErrClosed, err)
			case err != nil:
				err = fmt.Errorf("write agent stdin: %w", err)
			default:
				s.Touch()
			}
			req.done <- err
			if err != nil {
				s.log.Warn("agent stdin write failed", "err", err)
				return
			}
		case <-s.exited:
			return
		}
	}
}

// Touch records activity: the idle and least-recently-used clocks of a
// pool restart now.
func (s *Session) Touch() {
	s.mu.Lock()
	s.st.lastActive = time.Now()
	s.mu.Unlock()
}

// changed tells the pool that Busy or Alive may have changed.
func (s *Session) changed() {
	s.mu.Lock()
	f := s.onChange
	s.mu.Unlock()
	if f != nil {
		f()
	}
}

// SetOnChange installs the pool's notification hook: f is called, without
// the session's lock, whenever Busy or Alive may have changed. It must not block.
func (s *Session) SetOnChange(f func()) {
	s.mu.Lock()
	s.onChange = f
	s.mu.Unlock()
}

// Close stops the session gracefully: it closes stdin (the CLI finishes
// the running turn, prints its result and exits), waits up to
// Options.CloseGrace or until ctx ends, then kills the process group. It
// returns once the process is gone; the Exit event (Expected true, Reason
// "closed") is queued by then. Closing an exited session is a no-op.
func (s *Session) Close(ctx context.Context) error {
	return s.Stop(ctx, "closed")
}

// Stop is Close with a reason (the Exit's Reason: "idle", "evicted"...);
// the first reason given wins.
func (s *Session) Stop(ctx context.Context, reason string) error {
	s.mu.Lock()
	if s.reason == "" && !s.st.exited {
		s.reason = reason
	}
	s.closing = true
	s.mu.Unlock()
	s.changed()

	grace := time.NewTimer(s.opts.CloseGrace)
	defer grace.Stop()
	req := writeReq{closeStdin: true, done: make(chan error, 1)}
	select {
	case s.writes <- req:
		s.log.Debug("agent stdin closed", "reason", reason)
	case <-s.writerDone:
	case <-s.done:
	case <-grace.C:
	case <-ctx.Done():
	}
	select {
	case <-s.done:
		return nil
	case <-grace.C:
		s.log.Warn("agent did not exit within the grace period: killing", "grace", s.opts.CloseGrace)
	case <-ctx.Done():
		s.log.Warn("agent close cancelled: killing", "err", ctx.Err())
	}
	s.kill()
	<-s.done
	return nil
}

// freshGrace is how long a new session that has not been sent a message yet
// is protected from eviction.
const freshGrace = 30 * time.Second

// TryBeginStop marks the session stopping for reason only if it is not
// busy, atomically with respect to Send: once it returns true, Send fails
// with ErrClosed. The caller then stops it with Stop (in its own goroutine).
func (s *Session) TryBeginStop(reason string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing || s.st.exited || s.st.busy() {
		return false
	}
	// A session spawned for a message that is not written yet would be
	// evicted before it did anything (and could not be resumed): give its
	// caller a moment to send.
	if reason == "evicted" && !s.st.everSent && time.Since(s.st.lastActive) < freshGrace {
		return false
	}
	s.closing = true
	s.reason = reason
	return true
}
