// Package agents is the agents the conversation core runs: the pool it
// takes them from (Pool and its optional abilities WarmPool and Resumer,
// NewPool over agent/pool), how a profile's agent is spawned (Spawn:
// sandbox, network, secrets hidden, resource limits, MCP servers, the
// worktree hook), the warm spares each profile keeps, the operator's lists
// of live agents and spares, and the choices an ACP agent offers. It holds
// no conversation state and never imports bridges/core: the core imports it.
package agents

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/config/profile"
)

// Session is the core's view of one live agent process, of any kind
// (implemented by *agent.Session through NewPool: the Claude Code CLI
// over stream-json, or an ACP agent mapped onto the same events, see
// agent/driver.go). Send never waits for
// a turn; Events is read by exactly one goroutine of the core and is closed
// after the final streamjson.Exit event.
type Session interface {
	Send(ctx context.Context, m streamjson.UserMessage) error
	Respond(ctx context.Context, requestID string, d streamjson.Decision) error
	Interrupt(ctx context.Context) error
	SetModel(ctx context.Context, model string) error
	SetPermissionMode(ctx context.Context, mode string) error
	Events() <-chan streamjson.Event
}

// Pool hands out agent sessions by conversation key and caps live
// processes per profile. The core calls Acquire only when it has no live
// session for key (after the previous session's Exit event).
type Pool interface {
	// Acquire spawns a process for key with opts (new session or resume,
	// per opts.Resume), waiting for a free slot of the profile if needed.
	Acquire(ctx context.Context, key string, limit pool.Limit, opts agent.Options) (Session, error)
	// Remove stops key's live process, if any, and forgets it.
	Remove(ctx context.Context, key string) error
}

var _ Session = (*agent.Session)(nil)

// NewPool adapts the agent package's pool to Pool; the result is also a
// WarmPool and a Resumer and can list its processes (LiveAgents).
func NewPool(p *pool.Pool) Pool { return agentPool{p} }

type agentPool struct{ p *pool.Pool }

func (a agentPool) Acquire(ctx context.Context, key string, limit pool.Limit, opts agent.Options) (Session, error) {
	s, err := a.p.Acquire(ctx, key, limit, opts)
	if err != nil {
		return nil, fmt.Errorf("acquire agent: %w", err)
	}
	return s, nil
}

func (a agentPool) Remove(ctx context.Context, key string) error { return a.p.Remove(ctx, key) }

// Limit is the pool's limit for the agents of profile p: its max_live and
// idle_timeout; onWait (may be nil) is called, without blocking, when an
// Acquire has to wait for a free slot.
func Limit(p *profile.Agent, onWait func()) pool.Limit {
	return pool.Limit{Profile: p.Name, MaxLive: p.MaxLive, IdleTimeout: p.IdleTimeout, OnWait: onWait}
}

// WarmPool is a Pool that keeps warm spares per agent profile: CLI
// processes started and initialized ahead of time, handed to new
// conversations so that their first message does not wait for the CLI to
// boot (NewPool's pool is one). The core detects it by type assertion
// and, while it runs, keeps each bot profile's agents.*.warm_spares
// (KeepSpares).
type WarmPool interface {
	// KeepSpares sets the warm spares of cfg.Limit.Profile (see
	// pool.Pool.KeepSpares).
	KeepSpares(cfg pool.SpareConfig)
	// AcquireNew starts a new session for key (opts.Resume is false): a
	// ready spare whose spawn options equal opts apart from the session id
	// and state directory, else a cold spawn of opts. It returns the
	// session and its session id, which the caller must record before the
	// first Send: for a spare it is not opts.SessionID.
	AcquireNew(ctx context.Context, key string, limit pool.Limit, opts agent.Options) (Session, string, error)
	// SpareStatus reports what the profile's spares are doing.
	SpareStatus(profile string) pool.SpareStatus
}

var _ WarmPool = agentPool{}

func (a agentPool) KeepSpares(cfg pool.SpareConfig) { a.p.KeepSpares(cfg) }

func (a agentPool) AcquireNew(ctx context.Context, key string, limit pool.Limit, opts agent.Options) (Session, string, error) {
	s, err := a.p.AcquireNew(ctx, key, limit, opts)
	if err != nil {
		return nil, "", fmt.Errorf("acquire agent: %w", err)
	}
	return s, s.SessionID(), nil
}

func (a agentPool) SpareStatus(profile string) pool.SpareStatus { return a.p.SpareStatus(profile) }

// Len returns how many agent processes the pool holds (NewPoolCollector).
func (a agentPool) Len() int { return a.p.Len() }

// NewPoolCollector returns a Prometheus collector of the pool's gauges (see
// metrics.NewPoolCollector): the processes when agents can count them, the
// warm spares of each of profiles when it keeps them (WarmPool).
func NewPoolCollector(agents Pool, profiles []string) prometheus.Collector {
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
// Spawn.ProfileOptions sets agent.Options.Prepare to PrepareSpawn for every
// spawn, so the pool keeps its abilities (WarmPool) and a profile's warm
// spares start in their own worktrees as conversations do.
// bridges/features/worktree implements it.
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

// MoveSpareTools points a conversation's agent tools at the worktree of
// the warm spare it was given (session id sid; opts are the options the
// conversation asked for): the spare started in its own worktree
// (opts.Prepare ran with sid) while its tool servers were placeholders,
// bound to these at hand-over. Preparing sid's spawn again as a resume
// finds that worktree, creates nothing and moves the tools (WorkdirMover).
// The caller runs it before the conversation sends anything; a failure is
// logged.
func MoveSpareTools(ctx context.Context, opts agent.Options, sid string, log *slog.Logger) {
	if opts.Prepare == nil {
		return
	}
	opts.SessionID, opts.Resume = sid, true
	if _, err := opts.Prepare(ctx, opts); err != nil {
		log.Warn("point the agent tools at the warm spare's worktree", "session", sid, "err", err)
	}
}
