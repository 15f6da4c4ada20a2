package core

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/sessiondir"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/prometheus/client_golang/prometheus"
)

// AgentSession is the core's view of one live agent process, of any kind
// (implemented by *agent.Session through NewAgentPool: the Claude Code CLI
// over stream-json, or an ACP agent mapped onto the same events, see
// agent/driver.go). Send never waits for
// a turn; Events is read by exactly one goroutine of the core and is closed
// after the final streamjson.Exit event.
type AgentSession interface {
	Send(ctx context.Context, m streamjson.UserMessage) error
	Respond(ctx context.Context, requestID string, d streamjson.Decision) error
	Interrupt(ctx context.Context) error
	SetModel(ctx context.Context, model string) error
	SetPermissionMode(ctx context.Context, mode string) error
	Events() <-chan streamjson.Event
}

// AgentPool hands out agent sessions by conversation key and caps live
// processes per profile. The core calls Acquire only when it has no live
// session for key (after the previous session's Exit event).
type AgentPool interface {
	// Acquire spawns a process for key with opts (new session or resume,
	// per opts.Resume), waiting for a free slot of the profile if needed.
	Acquire(ctx context.Context, key string, limit pool.Limit, opts agent.Options) (AgentSession, error)
	// Remove stops key's live process, if any, and forgets it.
	Remove(ctx context.Context, key string) error
}

var _ AgentSession = (*agent.Session)(nil)

// NewAgentPool adapts the agent package's pool to AgentPool.
func NewAgentPool(p *pool.Pool) AgentPool { return agentPool{p} }

type agentPool struct{ p *pool.Pool }

func (a agentPool) Acquire(ctx context.Context, key string, limit pool.Limit, opts agent.Options) (AgentSession, error) {
	s, err := a.p.Acquire(ctx, key, limit, opts)
	if err != nil {
		return nil, fmt.Errorf("acquire agent: %w", err)
	}
	return s, nil
}

func (a agentPool) Remove(ctx context.Context, key string) error { return a.p.Remove(ctx, key) }

// WarmPool is an AgentPool that keeps warm spares per agent profile: CLI
// processes started and initialized ahead of time, handed to new
// conversations so that their first message does not wait for the CLI to
// boot (NewAgentPool's pool is one). The core detects it by type assertion
// and, while it runs, keeps each bot profile's agents.*.warm_spares.
type WarmPool interface {
	// KeepSpares sets the warm spares of cfg.Limit.Profile (see
	// pool.Pool.KeepSpares).
	KeepSpares(cfg pool.SpareConfig)
	// AcquireNew starts a new session for key (opts.Resume is false): a
	// ready spare whose spawn options equal opts apart from the session id
	// and state directory, else a cold spawn of opts. It returns the
	// session and its session id, which the caller must record before the
	// first Send: for a spare it is not opts.SessionID.
	AcquireNew(ctx context.Context, key string, limit pool.Limit, opts agent.Options) (AgentSession, string, error)
	// SpareStatus reports what the profile's spares are doing.
	SpareStatus(profile string) pool.SpareStatus
}

var _ WarmPool = agentPool{}

func (a agentPool) KeepSpares(cfg pool.SpareConfig) { a.p.KeepSpares(cfg) }

func (a agentPool) AcquireNew(ctx context.Context, key string, limit pool.Limit, opts agent.Options) (AgentSession, string, error) {
	s, err := a.p.AcquireNew(ctx, key, limit, opts)
	if err != nil {
		return nil, "", fmt.Errorf("acquire agent: %w", err)
	}
	return s, s.SessionID(), nil
}

func (a agentPool) SpareStatus(profile string) pool.SpareStatus { return a.p.SpareStatus(profile) }

// Len returns how many agent processes the pool holds (NewPoolCollector).
func (a agentPool) Len() int { return a.p.Len() }

// keepSpares makes a WarmPool keep the warm spares of every profile a bot
// of platforms uses, and returns a function that stops keeping them. The
// spares are spawned exactly as a new conversation of the profile would be
// (profileAgentOptions), so a conversation without overrides takes one.
func (c *Core) keepSpares(platforms map[string]bridges.Platform) (stop func()) {
	wp, ok := c.pool.(WarmPool)
	if !ok {
		return func() {}
	}
	var kept []pool.SpareConfig
	seen := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(platforms)) {
		bot := c.cfg().Bot(name)
		for _, pn := range bot.Profiles() { // the default and the profiles !agent may move to
			p := c.cfg().Agents[pn]
			if p == nil || seen[p.Name] {
				continue
			}
			seen[p.Name] = true
			sc := pool.SpareConfig{
				Limit:   pool.Limit{Profile: p.Name, MaxLive: p.MaxLive, IdleTimeout: p.IdleTimeout},
				Count:   p.WarmSpares,
				Options: c.profileAgentOptions(p),
				WarmUp:  true,
				// warm_spares: auto
				Auto:        p.WarmSparesAuto,
				Max:         p.MaxWarmSpares,
				SpareMemory: p.SpareMemory,
			}
			c.spareTools(&sc.Options, bot, p, platforms[name])
			if wt := c.opts.Worktrees; wt != nil && p.Worktree {
				sc.Options.Prepare = func(ctx context.Context, o agent.Options) (agent.Options, error) {
					return wt.PrepareSpawn(ctx, p, o, true)
				}
			}
			if c.cfg().DataDir != "" {
				sc.StateRoot = filepath.Join(c.cfg().DataDir, sessiondir.Dir)
			}
			if p.KeepsSpares() {
				wp.KeepSpares(sc)
				kept = append(kept, sc)
				c.log.Debug("keeping warm spares", "profile", p.Name, "count", p.WarmSparesText(), "max_live", p.MaxLive)
			}
		}
	}
	return func() {
		for _, sc := range kept {
			sc.Count, sc.Auto = 0, false
			wp.KeepSpares(sc)
		}
	}
}

// profileAgentOptions are the spawn options every conversation of profile p
// starts from: everything but the session (id, resume, state directory)
// and the conversation's own overrides (see conversation.agentOptions).
func (c *Core) profileAgentOptions(p *profile.Agent) agent.Options {
	opts := agent.Options{
		Kind:               p.Kind,
		Command:            p.Command,
		Args:               append([]string(nil), p.Args...),
		Workdir:            p.Workdir,
		Home:               p.Home,
		Model:              p.Model,
		PermissionMode:     profilePermissionMode(p),
		AllowedTools:       append([]string(nil), p.AllowedTools...),
		DisallowedTools:    append([]string(nil), p.DisallowedTools...),
		AppendSystemPrompt: p.AppendSystemPrompt,
		MaxTurns:           p.MaxTurns,
		Env:                maps.Clone(p.Env),
		Sandbox:            c.containment().Sandboxes[p.Name],
		Network:            c.containment().Networks[p.Name],
		Hide:               secretPaths(c.cfg()),
		Cgroups:            c.opts.Cgroups,
		Limits:             sandboxLimits(p.Resources),
	}
	if p.Kind == profile.KindACP {
		// An ACP agent offers its own modes: none is asked for unless the
		// conversation chose one (conversation.agentOptions), so that its
		// conversations and its warm spares spawn alike.
		opts.PermissionMode = ""
	}
	if wt := c.opts.Worktrees; wt != nil && p.Worktree {
		opts.Prepare = func(ctx context.Context, o agent.Options) (agent.Options, error) {
			return wt.PrepareSpawn(ctx, p, o, false)
		}
	}
	for name, s := range p.MCPServers {
		if opts.StdioMCPServers == nil {
			opts.StdioMCPServers = map[string]agent.StdioMCPServer{}
		}
		opts.StdioMCPServers[name] = agent.StdioMCPServer{Command: s.Command, Args: slices.Clone(s.Args), Env: maps.Clone(s.Env)}
	}
	for _, b := range p.SandboxBinds {
		opts.Binds = append(opts.Binds, sandbox.Bind{Path: b.Path, Writable: b.Writable})
	}
	return opts
}

// profilePermissionMode is the profile's permission mode; a
// bypassPermissions the profile does not allow (which check-config
// refuses) falls back to default.
func profilePermissionMode(p *profile.Agent) string {
	m := textcut.OrBlank(p.PermissionMode, profile.ModeDefault)
	if m == profile.ModeBypass && !p.AllowBypass {
		return profile.ModeDefault
	}
	return m
}

// onSpareTaken records the session id of a warm spare the conversation
// was given, before anything is written to it. It reports false when the
// id could not be stored: the process was then given back and delivery is
// retried.
func (cv *conversation) onSpareTaken(ctx context.Context, sess AgentSession, id string) bool {
	if err := cv.st.SetSessionID(ctx, cv.id, id); err != nil {
		cv.log.Error("store the warm spare's session id; retrying", "session", id, "err", err)
		pool, key := cv.core.pool, cv.id
		cv.spawn(func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
			defer cancel()
			if err := pool.Remove(rctx, key); err != nil {
				cv.log.Warn("stop the untracked agent process", "err", err)
			}
		})
		cv.core.readers.Go(func() { drain(sess) })
		cv.after(time.Second, timerRetry, "")
		return false
	}
	cv.log.Info("new session on a warm spare", "session", id)
	cv.row.SessionID, cv.resume, cv.freshRetry = id, false, false
	return true
}

// spareStatusLine describes the profile's warm spares for !status, or ""
// when the profile keeps none.
func (cv *conversation) spareStatusLine() string {
	wp, ok := cv.core.pool.(WarmPool)
	if !ok || !cv.profile.KeepsSpares() {
		return ""
	}
	st := wp.SpareStatus(cv.profile.Name)
	label := "warm spares"
	if st.Auto {
		label = fmt.Sprintf("warm spares (auto, at most %d)", st.Max)
	}
	switch {
	case st.Want == 0:
		return ""
	case st.Failures > 0 && st.Ready == 0:
		next := "now"
		if wait := time.Until(st.NextAttempt); wait > 0 {
			next = "in " + render.FormatDuration(wait.Round(time.Second))
		}
		return fmt.Sprintf("\n• %s: ⚠️ failing to start (%d in a row): %s; next try %s",
			label, st.Failures, textcut.OneLine(st.LastError, 200), next)
	case st.MemShort:
		return fmt.Sprintf("\n• %s: %d of %d ready (no more start: less than the spare memory available)", label, st.Ready, st.Want)
	case st.WarmUpOff != "":
		return fmt.Sprintf("\n• %s: %d of %d ready (without a warm-up turn: %s)", label, st.Ready, st.Want, textcut.OneLine(st.WarmUpOff, 160))
	default:
		return fmt.Sprintf("\n• %s: %d of %d ready", label, st.Ready, st.Want)
	}
}

// spareTools gives a spare's options the bridge's agent tools, as every
// conversation has them (conversation.withAgentTools): the same server
// name and allowed tools, so a conversation can take the spare. The server
// here only answers the CLI's start-up (initialize, tools/list); the pool
// binds the spare to the conversation's own server when it hands it over.
func (c *Core) spareTools(opts *agent.Options, bot *config.Bot, p *profile.Agent, pl bridges.Platform) {
	proto := &conversation{core: c, bot: bot, profile: p, platform: pl, limits: pl.Limits(), log: c.log}
	proto.withAgentTools(opts)
}

// NewPoolCollector returns a Prometheus collector of the pool's gauges (see
// metrics.NewPoolCollector): the processes when agents can count them, the
// warm spares of each of profiles when it keeps them (WarmPool).
func NewPoolCollector(agents AgentPool, profiles []string) prometheus.Collector {
	count, _ := agents.(metrics.Counter)
	var spares metrics.Spares
	if wp, ok := agents.(WarmPool); ok {
		spares = wp
	}
	return metrics.NewPoolCollector(count, spares, profiles)
}

// Worktrees gives each session of a profile with worktree: true a git
// worktree of its own. It is a spawn hook, not a wrapper of the pool
// (DESIGN.md §2: a wrapper hides the wrapped value's optional abilities):
// the core sets agent.Options.Prepare to PrepareSpawn for every spawn, so
// the pool keeps its abilities (WarmPool) and a profile's warm spares
// start in their own worktrees as conversations do. bridges/features/worktree implements it.
type Worktrees interface {
	// PrepareSpawn returns the options to start opts, a session of
	// profile p, with: unchanged for a profile without worktrees. It runs
	// in agent.Start, off the conversation's worker, so git's time does
	// not hold the conversation up; it may block. For a warm spare
	// (spare) it fails rather than start the spare outside a worktree:
	// a conversation that takes a spare must find it in its worktree.
	PrepareSpawn(ctx context.Context, p *profile.Agent, opts agent.Options, spare bool) (agent.Options, error)
	// Status is the !status line of the worktree of session sessionID of
	// profile p, or "" when the profile does not use worktrees.
	Status(p *profile.Agent, sessionID string) string
	// Retire removes the worktree of the former session sessionID of
	// profile p (its agent process is stopped), keeping it when it has
	// uncommitted changes or could not be checked. It returns the line to
	// tell the conversation, "" when there was no worktree.
	Retire(ctx context.Context, p *profile.Agent, sessionID string, log *slog.Logger) string
}

// WorkdirMover is an agent tool server that works in the agent's working
// directory (the bridge's send_file): PrepareSpawn moves it into the
// session's worktree before the tools are in use.
type WorkdirMover interface {
	// MoveTo makes the server work in workdir, which lies inside root (a
	// worktree under data_dir): paths the server hides that contain root
	// stop hiding it. Called once, before the server serves a tool call.
	MoveTo(workdir, root string)
}

// worktreeStatus is the !status line of the conversation's worktree, or ""
// when the profile does not use worktrees.
func (cv *conversation) worktreeStatus() string {
	if cv.core.opts.Worktrees == nil {
		return ""
	}
	return cv.core.opts.Worktrees.Status(cv.profile, cv.row.SessionID)
}

// retireWorktree removes the worktree of the conversation's former session
// sessionID after !new or !resume (see Worktrees.Retire) and returns the
// line to tell the conversation, "" when there was none.
func (cv *conversation) retireWorktree(ctx context.Context, sessionID string) string {
	if cv.core.opts.Worktrees == nil {
		return ""
	}
	return cv.core.opts.Worktrees.Retire(ctx, cv.profile, sessionID, cv.log)
}

// moveSpareTools points the conversation's agent tools at the worktree
// of the warm spare it was given (session id sid): the spare started in
// its own worktree (opts.Prepare ran with sid) while its tool servers
// were placeholders, bound to these at hand-over. Preparing sid's spawn
// again as a resume finds that worktree, creates nothing and moves the
// tools (WorkdirMover). It runs before the conversation sends anything.
func moveSpareTools(ctx context.Context, opts agent.Options, sid string, log *slog.Logger) {
	if opts.Prepare == nil {
		return
	}
	opts.SessionID, opts.Resume = sid, true
	if _, err := opts.Prepare(ctx, opts); err != nil {
		log.Warn("point the agent tools at the warm spare's worktree", "session", sid, "err", err)
	}
}
