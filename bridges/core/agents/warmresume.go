package agents

import (
	"context"
	"errors"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/pool"
)

// Resumer is a Pool that can start a conversation's session ahead of
// its return (pool.Pool.WarmResume; NewPool's pool is one). The core
// detects it by type assertion.
type Resumer interface {
	// WarmResume starts key's session with opts (opts.Resume is true) in
	// a free slot of limit.Profile, initialized and, with warmUp, warmed
	// up, and returns once it is ready; the next Acquire of key with the
	// same options takes it. An error for which NoRoom is true means the
	// profile has no slot or memory to spare.
	WarmResume(ctx context.Context, key string, limit pool.Limit, opts agent.Options, warmUp bool) error
}

var _ Resumer = agentPool{}

func (a agentPool) WarmResume(ctx context.Context, key string, limit pool.Limit, opts agent.Options, warmUp bool) error {
	return a.p.WarmResume(ctx, key, limit, opts, warmUp)
}

// NoRoom reports whether err, from Resumer.WarmResume, says the profile
// has no slot or memory to spare (pool.ErrNoRoom).
func NoRoom(err error) bool { return errors.Is(err, pool.ErrNoRoom) }
