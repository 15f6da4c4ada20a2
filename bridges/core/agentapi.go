package core

import (
	"context"
	"fmt"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// AgentSession is the core's view of one live Claude Code CLI process
// (implemented by *agent.Session through NewAgentPool). Send never waits for
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
