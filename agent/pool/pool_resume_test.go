package pool

import (
	"context"
	"errors"
	"testing"
)

// TestWarmResumeSlots (scripted CLI): a warm resume takes only a slot that
// is free beyond the spares the profile wants, also while an Acquire of the
// profile is under way; the conversation's Acquire with the same options
// takes the very process; one with other options gets a new process.
func TestWarmResumeSlots(t *testing.T) {
	r := newSpareRig(t, 1, 4, nil)
	r.pool.KeepSpares(r.cfg)
	r.waitStatus(t, "one ready spare", ready(1))
	ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
	defer cancel()
	limit := r.cfg.Limit
	if _, err := r.pool.Acquire(ctx, "a", limit, r.newOpts()); err != nil {
		t.Fatal(err)
	}
	// An Acquire under way counts as a slot taken, not as a refusal.
	r.pool.mu.Lock()
	r.pool.waiting[limit.Profile]++
	r.pool.mu.Unlock()
	b := r.newOpts()
	b.Resume = true
	if err := r.pool.WarmResume(ctx, "b", limit, b, false); err != nil {
		t.Fatalf("warm resume with a slot free: %v", err)
	}
	c := r.newOpts()
	c.Resume = true
	if err := r.pool.WarmResume(ctx, "c", limit, c, false); !errors.Is(err, ErrNoRoom) {
		t.Errorf("warm resume into the last slot (a, b, the spare's, the Acquire under way): %v, want ErrNoRoom", err)
	}
	r.pool.mu.Lock()
	r.pool.waiting[limit.Profile]--
	r.pool.mu.Unlock()
	if err := r.pool.WarmResume(ctx, "b", limit, b, false); err == nil || errors.Is(err, ErrNoRoom) {
		t.Errorf("a second warm resume of b: %v, want a refusal for the process it has", err)
	}
	spawns := len(r.spawnLog(t))
	s, err := r.pool.Acquire(ctx, "b", limit, b)
	if err != nil {
		t.Fatal(err)
	}
	if s.SessionID() != b.SessionID || len(r.spawnLog(t)) != spawns {
		t.Errorf("Acquire of b: session %s after %d spawns (was %d); want the warm resume", s.SessionID(), len(r.spawnLog(t)), spawns)
	}
	if got, ok := r.pool.Get("b"); !ok || got != s {
		t.Error("Get does not report the claimed session")
	}

	// Other options (a model set meanwhile): a new process.
	if err := r.pool.Remove(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if err := r.pool.WarmResume(ctx, "b", limit, b, false); err != nil {
		t.Fatal(err)
	}
	other := b
	other.Model = "claude-other"
	spawns = len(r.spawnLog(t))
	s2, err := r.pool.Acquire(ctx, "b", limit, other)
	if err != nil {
		t.Fatal(err)
	}
	if s2 == s || s2.Options().Model != "claude-other" {
		t.Errorf("Acquire with another model: model %q; want a new process", s2.Options().Model)
	}
	waitUntil(t, "the new process's start", eventTimeout, func() bool { return len(r.spawnLog(t)) == spawns+1 })
}
