package pool

import (
	"context"
	"testing"

	"github.com/agentbridge/agentbridge/agent/agenttest"
)

// TestStaleSpareNeverHandedOut: a ready spare started before the profile's
// spawn options changed (a reload) is not handed to a new conversation —
// also in the moment before the keeper stopped it. The reload is made as
// KeepSpares makes it, under the pool's lock, but without waking the
// keeper, so the stale spare is certainly still there, ready, when
// AcquireNew looks.
func TestStaleSpareNeverHandedOut(t *testing.T) {
	r := newSpareRig(t, 1, 8, nil)
	r.pool.KeepSpares(r.cfg)
	r.waitStatus(t, "a ready spare", ready(1))
	old := r.pool.spareSessions("coder")
	if len(old) != 1 {
		t.Fatalf("spares %v, want one", old)
	}
	changed := r.cfg.Options
	changed.Model = "haiku"
	r.pool.mu.Lock()
	ss := r.pool.spares["coder"]
	if sameSpawn(ss.cfg.Options, changed) {
		r.pool.mu.Unlock()
		t.Fatal("the changed options spawn the same CLI")
	}
	ss.gen++ // as KeepSpares does for changed options
	ss.cfg.Options = changed
	r.pool.mu.Unlock()

	opts := r.newOpts()
	opts.Model = "haiku"
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.EventTimeout)
	defer cancel()
	s, err := r.pool.AcquireNew(ctx, "conv", r.cfg.Limit, opts)
	if err != nil {
		t.Fatal(err)
	}
	agenttest.Record(t, s)
	if s.SessionID() == old[0] || s.SessionID() != opts.SessionID {
		t.Fatalf("new conversation got session %s (stale spare %s): want a cold spawn of %s", s.SessionID(), old[0], opts.SessionID)
	}
}

// TestReloadedOptionsBumpGeneration: KeepSpares with other spawn options
// makes the spares so far stale (a new generation); with the same options
// it does not.
func TestReloadedOptionsBumpGeneration(t *testing.T) {
	r := newSpareRig(t, 0, 8, nil)
	r.pool.KeepSpares(r.cfg)
	gen := func() uint64 {
		r.pool.mu.Lock()
		defer r.pool.mu.Unlock()
		return r.pool.spares["coder"].gen
	}
	g0 := gen()
	r.pool.KeepSpares(r.cfg)
	if g := gen(); g != g0 {
		t.Fatalf("same options: generation %d → %d", g0, g)
	}
	changed := r.cfg
	changed.Options.Model = "haiku"
	r.pool.KeepSpares(changed)
	if g := gen(); g != g0+1 {
		t.Fatalf("changed options: generation %d → %d, want %d", g0, g, g0+1)
	}
}
