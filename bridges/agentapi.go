package bridges

import (
	"context"
	"time"

	"github.com/agentbridge/agentbridge/agent"
)

// AgentSession is the core's view of one live Claude Code CLI process
// (implemented by *agent.Session through NewAgentPool). Send never waits for
// a turn; Events is read by exactly one goroutine of the core and is closed
// after the final agent.Exit event.
type AgentSession interface {
	Send(ctx context.Context, m agent.UserMessage) error
	Respond(ctx context.Context, requestID string, d agent.Decision) error
	Interrupt(ctx context.Context) error
	SetModel(ctx context.Context, model string) error
	SetPermissionMode(ctx context.Context, mode string) error
	Events() <-chan agent.Event
}

// AgentLimit is how many processes an agent profile may keep live and when
// an idle one is stopped.
type AgentLimit struct {
	Profile     string        // agent profile name: the cap is per profile
	MaxLive     int           // live processes of the profile
	IdleTimeout time.Duration // stop a process idle this long; 0 = never
	// OnWait is called (once, from the Acquire caller's goroutine) when
	// Acquire has to wait for a free slot.
	OnWait func()
}

// AgentPool hands out agent sessions by conversation key and caps live
// processes per profile. The core calls Acquire only when it has no live
// session for key (after the previous session's Exit event).
type AgentPool interface {
	// Acquire spawns a process for key with opts (new session or resume,
	// per opts.Resume), waiting for a free slot of the profile if needed.
	Acquire(ctx context.Context, key string, limit AgentLimit, opts agent.Options) (AgentSession, error)
	// Remove stops key's live process, if any, and forgets it.
	Remove(ctx context.Context, key string) error
}
