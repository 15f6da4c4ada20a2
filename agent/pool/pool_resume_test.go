package pool

import (
	"context"
	"errors"
	"testing"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestWarmResumeSlots (scripted CLI): a warm resume takes only a slot that
// is free beyond the spares the profile wants, also while an Acquire of the
// profile is under way; the conversation's Acquire with the same options
// takes the very process; one with other options gets a new process.
func TestWarmResumeSlots(t *testing.T) {
	r := newSpareRig(t, 1, 4, nil)
	r.pool.KeepSpares(r.cfg)
	r.waitStatus(t, "one ready spare", ready(1))
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.EventTimeout)
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
	testkit.WaitUntil(t, "the new process's start", agenttest.EventTimeout, func() bool { return len(r.spawnLog(t)) == spawns+1 })
}

// TestWarmResumeStamp (scripted CLI): a warm resume started from one set
// of session files (agent.Options.ResumeStamp) is taken by an Acquire of
// the same files only; an Acquire whose files changed meanwhile (another
// replica ran turns) stops it and starts a new process, so the stale
// history is never answered from.
func TestWarmResumeStamp(t *testing.T) {
	r := newSpareRig(t, 0, 4, nil)
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.EventTimeout)
	defer cancel()
	limit := r.cfg.Limit
	early := r.newOpts()
	early.Resume, early.ResumeStamp = true, "files-after-turn-1"
	if err := r.pool.WarmResume(ctx, "k", limit, early, false); err != nil {
		t.Fatal(err)
	}
	spawns := len(r.spawnLog(t))
	now := early
	now.ResumeStamp = "files-after-turn-3"
	s, err := r.pool.Acquire(ctx, "k", limit, now)
	if err != nil {
		t.Fatal(err)
	}
	if s.Options().ResumeStamp != now.ResumeStamp {
		t.Errorf("Acquire with newer session files got the process started from %q", s.Options().ResumeStamp)
	}
	testkit.WaitUntil(t, "the new process's start", agenttest.EventTimeout, func() bool { return len(r.spawnLog(t)) == spawns+1 })

	// The same files: the warm resume is taken as it is.
	if err := r.pool.Remove(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if err := r.pool.WarmResume(ctx, "k", limit, now, false); err != nil {
		t.Fatal(err)
	}
	spawns = len(r.spawnLog(t))
	if _, err := r.pool.Acquire(ctx, "k", limit, now); err != nil {
		t.Fatal(err)
	}
	if n := len(r.spawnLog(t)); n != spawns {
		t.Errorf("Acquire with the same session files spawned %d more processes, want the warm resume", n-spawns)
	}
}
