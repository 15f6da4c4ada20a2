package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWarmSpareIsANormalSession runs a spare of the real CLI: it is ready
// only after answering initialize, its first turn runs under its own
// session id, the transcript lands in its private state directory, and
// after the process is stopped the conversation resumes from there with
// its history.
func TestWarmSpareIsANormalSession(t *testing.T) {
	h := newHarness(t)
	pool := NewPool(testLogger(t))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = pool.Close(ctx)
	})
	tmpl := h.opts()
	tmpl.SessionID = ""
	cfg := SpareConfig{
		Limit:     PoolLimit{Profile: "coder", MaxLive: 2},
		Count:     1,
		Options:   tmpl,
		StateRoot: filepath.Join(t.TempDir(), "sessions"),
	}
	pool.KeepSpares(cfg)
	waitUntil(t, "a ready spare", eventTimeout, func() bool { return pool.SpareStatus("coder").Ready == 1 })

	ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
	defer cancel()
	opts := h.opts() // what a new conversation asks for: only the id differs
	s, err := pool.AcquireNew(ctx, "conv", cfg.Limit, opts)
	if err != nil {
		t.Fatal(err)
	}
	id := s.SessionID()
	if id == opts.SessionID {
		t.Fatal("the new conversation did not get the spare")
	}
	rec := record(t, s)
	send(t, s, "remember the word kiwi")
	init := rec.next(t, "Init", func(ev Event) bool { _, ok := ev.(Init); return ok }).(Init)
	res := nextResult(t, rec)
	if init.SessionID != id || res.SessionID != id || res.IsError || res.CostUSD <= 0 {
		t.Fatalf("first turn: init session %s, result %+v; want a normal turn of session %s", init.SessionID, res, id)
	}
	state := filepath.Join(cfg.StateRoot, id)
	transcripts, _ := filepath.Glob(filepath.Join(state, "claude", "projects", "*", id+".jsonl"))
	if len(transcripts) != 1 {
		t.Fatalf("transcript of %s in %s: %v", id, state, transcripts)
	}
	if b, err := os.ReadFile(transcripts[0]); err != nil || !strings.Contains(string(b), "remember the word kiwi") {
		t.Errorf("transcript does not hold the first message (err %v)", err)
	}

	// Stopped (as by eviction or the idle timeout), then resumed.
	if err := pool.Remove(ctx, "conv"); err != nil {
		t.Fatal(err)
	}
	rec.waitClosed(t)
	ropts := h.opts()
	ropts.SessionID, ropts.Resume, ropts.StateDir = id, true, state
	s2, err := pool.Acquire(ctx, "conv", cfg.Limit, ropts)
	if err != nil {
		t.Fatal(err)
	}
	rec2 := record(t, s2)
	send(t, s2, "[echo-history]")
	// Exactly the one message: the spare's initialize and prewarm added
	// nothing to the conversation.
	if res := nextResult(t, rec2); res.Text != "history: remember the word kiwi" || res.SessionID != id {
		t.Errorf("resumed turn: %+v; want the history of session %s", res, id)
	}
}

// TestPrewarm: the real CLI answers Prewarm (get_context_usage, summary)
// after initialize without calling the model, and the first turn after it
// is a normal first turn.
func TestPrewarm(t *testing.T) {
	h := newHarness(t)
	s, rec := h.start(h.opts())
	ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
	defer cancel()
	if err := s.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Prewarm(ctx); err != nil {
		t.Fatalf("Prewarm: %v", err)
	}
	if n := len(h.srv.Requests()); n != 0 {
		t.Errorf("Prewarm made %d model requests, want none", n)
	}
	send(t, s, "[echo-history] hello")
	if res := nextResult(t, rec); res.IsError || res.Text != "history: (none)" {
		t.Errorf("first turn after Prewarm: %+v", res)
	}
}
