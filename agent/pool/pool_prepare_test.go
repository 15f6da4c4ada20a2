package pool

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/agenttest"
)

// TestPrepareRunsForSparesAndMatches: Options.Prepare runs before every
// spawn with the session's final id — a warm spare's own — and is not part
// of the spawn's shape: a new conversation whose options carry another
// Prepare func still takes the ready spare.
func TestPrepareRunsForSparesAndMatches(t *testing.T) {
	r := newSpareRig(t, 1, 4, nil)
	var (
		mu       sync.Mutex
		prepared []string
	)
	prepare := func(_ context.Context, o agent.Options) (agent.Options, error) {
		mu.Lock()
		defer mu.Unlock()
		prepared = append(prepared, o.SessionID)
		return o, nil
	}
	r.cfg.Options.Prepare = prepare
	r.pool.KeepSpares(r.cfg)
	r.waitStatus(t, "a ready spare", ready(1))

	opts := r.newOpts()
	opts.Prepare = func(ctx context.Context, o agent.Options) (agent.Options, error) { return prepare(ctx, o) } // another func value
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.EventTimeout)
	defer cancel()
	s, err := r.pool.AcquireNew(ctx, "conv-1", r.cfg.Limit, opts)
	if err != nil {
		t.Fatal(err)
	}
	if s.SessionID() == opts.SessionID {
		t.Fatal("the new conversation was spawned cold: options differing only in Prepare must match the spare")
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(prepared, s.SessionID()) {
		t.Errorf("Prepare ran for %v, not for the spare %s", prepared, s.SessionID())
	}
}
