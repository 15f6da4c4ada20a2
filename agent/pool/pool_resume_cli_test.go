package pool

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestWarmResume runs the real CLI: a conversation stopped after one turn
// is resumed ahead of its return (WarmResume, with a warm-up turn against
// the pool's local model, not the fake model), its next Acquire takes
// that very process, and the conversation holds exactly its history: the
// warm-up turn was rewound, also for a later cold resume. While it waits
// unclaimed it yields its slot to another conversation, and a warm resume
// never takes a slot that is not free.
func TestWarmResume(t *testing.T) {
	t.Parallel() // a real CLI or many spawns, independent of the others: beside them
	h := &harness{agenttest.NewHarness(t)}
	pool := closedAtCleanup(t, New(testkit.Logger(t)))
	ctx, cancel := context.WithTimeout(context.Background(), 3*agenttest.EventTimeout)
	defer cancel()
	limit := Limit{Profile: "coder", MaxLive: 1}
	opts := h.opts()
	opts.StateDir = filepath.Join(t.TempDir(), opts.SessionID)
	s, err := pool.Acquire(ctx, "conv", limit, opts)
	if err != nil {
		t.Fatal(err)
	}
	rec := agenttest.Record(t, s)
	agenttest.Send(t, s, "remember the word kiwi")
	agenttest.NextResult(t, rec)
	if err := pool.Remove(ctx, "conv"); err != nil {
		t.Fatal(err)
	}
	rec.WaitClosed(t)

	ropts := opts
	ropts.Resume = true
	before := len(h.Model.MessagesRequests())
	if err := pool.WarmResume(ctx, "conv", limit, ropts, true); err != nil {
		t.Fatalf("WarmResume: %v", err)
	}
	if n := len(h.Model.MessagesRequests()) - before; n != 0 {
		t.Errorf("the warm resume made %d requests to the model, want none (its warm-up turn goes to the local stand-in)", n)
	}
	if _, ok := pool.Get("conv"); ok {
		t.Error("Get reports an unclaimed warm resume as the conversation's session")
	}
	if err := pool.WarmResume(ctx, "other", limit, ropts, true); !errors.Is(err, ErrNoRoom) {
		t.Errorf("a second warm resume with max_live 1: %v, want ErrNoRoom", err)
	}
	w, err := pool.Acquire(ctx, "conv", limit, ropts)
	if err != nil {
		t.Fatal(err)
	}
	if pool.Len() != 1 || w.SessionID() != opts.SessionID {
		t.Fatalf("Acquire after the warm resume: %d processes, session %s; want the warm one (%s)", pool.Len(), w.SessionID(), opts.SessionID)
	}
	rec = agenttest.Record(t, w)
	agenttest.Send(t, w, "[echo-history]")
	if res := agenttest.NextResult(t, rec); res.Text != "history: remember the word kiwi" {
		t.Errorf("first turn on the warm resume: %q; want the conversation's history only", res.Text)
	}
	if err := pool.Remove(ctx, "conv"); err != nil {
		t.Fatal(err)
	}
	rec.WaitClosed(t)

	// Unclaimed, it makes room for another conversation (gracefully: its
	// transcript stays whole).
	if err := pool.WarmResume(ctx, "conv", limit, ropts, true); err != nil {
		t.Fatalf("second WarmResume: %v", err)
	}
	o, err := pool.Acquire(ctx, "new", limit, h.opts())
	if err != nil {
		t.Fatalf("a new conversation with the slot held by a warm resume: %v", err)
	}
	if pool.Len() != 1 {
		t.Errorf("%d processes after the warm resume yielded, want 1", pool.Len())
	}
	if err := pool.Remove(ctx, "new"); err != nil {
		t.Fatal(err)
	}
	_ = o

	// A cold resume holds the real turns only: no warm-up turn of either warm resume.
	c, err := pool.Acquire(ctx, "conv", limit, ropts)
	if err != nil {
		t.Fatal(err)
	}
	rec = agenttest.Record(t, c)
	agenttest.Send(t, c, "[echo-history]")
	if res := agenttest.NextResult(t, rec); res.Text != "history: remember the word kiwi | [echo-history]" || strings.Contains(res.Text, warmUpTextForTest) {
		t.Errorf("cold resume after two warm resumes: %q", res.Text)
	}
}

// warmUpTextForTest is agent's warm-up message (agent.warmUpText).
const warmUpTextForTest = "Reply with OK."
