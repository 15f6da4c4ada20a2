package pool

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestWarmSpareIsANormalSession runs a spare of the real CLI: it is ready
// only after answering initialize, its first turn runs under its own
// session id, the transcript lands in its private state directory, and
// after the process is stopped the conversation resumes from there with
// its history.
func TestWarmSpareIsANormalSession(t *testing.T) {
	t.Parallel() // a real CLI or many spawns, independent of the others: beside them
	h := &harness{agenttest.NewHarness(t)}
	pool := closedAtCleanup(t, New(testkit.Logger(t)))
	tmpl := h.opts()
	tmpl.SessionID = ""
	cfg := SpareConfig{
		Limit:     Limit{Profile: "coder", MaxLive: 2},
		Count:     1,
		Options:   tmpl,
		StateRoot: filepath.Join(t.TempDir(), "sessions"),
	}
	pool.KeepSpares(cfg)
	testkit.WaitUntil(t, "a ready spare", agenttest.EventTimeout, func() bool { return pool.SpareStatus("coder").Ready == 1 })

	ctx, cancel := context.WithTimeout(context.Background(), agenttest.EventTimeout)
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
	rec := agenttest.Record(t, s)
	agenttest.Send(t, s, "remember the word kiwi")
	init := rec.Next(t, "Init", func(ev streamjson.Event) bool { _, ok := ev.(streamjson.Init); return ok }).(streamjson.Init)
	res := agenttest.NextResult(t, rec)
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

	// Stopped (as by eviction or the idle timeout), then resumed. Exactly
	// the one message: the spare's initialize and prewarm added nothing to
	// the conversation.
	if res := resumedHistory(t, h, pool, cfg.Limit, rec, id, state); res.Text != "history: remember the word kiwi" || res.SessionID != id {
		t.Errorf("resumed turn: %+v; want the history of session %s", res, id)
	}
}

// closedAtCleanup closes pool when the test ends.
func closedAtCleanup(t *testing.T, pool *Pool) *Pool {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = pool.Close(ctx)
	})
	return pool
}

// resumedHistory stops the session of key "conv" (rec records it), resumes
// session id from state and returns the result of an [echo-history] turn.
func resumedHistory(t *testing.T, h *harness, pool *Pool, limit Limit, rec *agenttest.Recorder, id, state string) streamjson.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.EventTimeout)
	defer cancel()
	if err := pool.Remove(ctx, "conv"); err != nil {
		t.Fatal(err)
	}
	rec.WaitClosed(t)
	ropts := h.opts()
	ropts.SessionID, ropts.Resume, ropts.StateDir = id, true, state
	s, err := pool.Acquire(ctx, "conv", limit, ropts)
	if err != nil {
		t.Fatal(err)
	}
	rec2 := agenttest.Record(t, s)
	agenttest.Send(t, s, "[echo-history]")
	return agenttest.NextResult(t, rec2)
}

// TestPrewarm: the real CLI answers Prewarm (get_context_usage, summary)
// after initialize without calling the model, and the first turn after it
// is a normal first turn.
func TestPrewarm(t *testing.T) {
	t.Parallel() // a real CLI or many spawns, independent of the others: beside them
	h := &harness{agenttest.NewHarness(t)}
	s, rec := h.start(h.opts())
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.EventTimeout)
	defer cancel()
	if err := s.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Prewarm(ctx); err != nil {
		t.Fatalf("Prewarm: %v", err)
	}
	if n := len(h.Model.Requests()); n != 0 {
		t.Errorf("Prewarm made %d model requests, want none", n)
	}
	agenttest.Send(t, s, "[echo-history] hello")
	if res := agenttest.NextResult(t, rec); res.IsError || res.Text != "history: (none)" {
		t.Errorf("first turn after Prewarm: %+v", res)
	}
}

// TestWarmUpTurn runs spares of the real CLI with a warm-up turn: the turn
// goes to the pool's local model (the fake model sees nothing until the
// conversation's first message), the first real request has exactly the
// shape of a fresh session's first request and costs the same, the
// session id is the spare's, and after a stop the resumed conversation
// holds the real message only.
func TestWarmUpTurn(t *testing.T) {
	t.Parallel() // a real CLI or many spawns, independent of the others: beside them
	h := &harness{agenttest.NewHarness(t)}
	pool := closedAtCleanup(t, New(testkit.Logger(t)))
	ctx, cancel := context.WithTimeout(context.Background(), 2*agenttest.EventTimeout)
	defer cancel()

	// A fresh session's first request, for comparison.
	cold, coldRec := h.start(h.opts())
	agenttest.Send(t, cold, "[echo-history] first")
	coldRes := agenttest.NextResult(t, coldRec)
	fresh := h.Model.MessagesRequests()
	if len(fresh) != 1 {
		t.Fatalf("a fresh first turn made %d model requests", len(fresh))
	}

	tmpl := h.opts()
	tmpl.SessionID = ""
	cfg := SpareConfig{Limit: Limit{Profile: "coder", MaxLive: 3}, Count: 1, Options: tmpl,
		StateRoot: filepath.Join(t.TempDir(), "sessions"), WarmUp: true}
	pool.KeepSpares(cfg)
	testkit.WaitUntil(t, "a ready spare", 2*agenttest.EventTimeout, func() bool { return pool.SpareStatus("coder").Ready == 1 })
	if st := pool.SpareStatus("coder"); st.WarmUpOff != "" || st.Failures != 0 {
		t.Fatalf("spare status %+v; want a warm-up turn", st)
	}
	if n := len(h.Model.MessagesRequests()); n != 1 {
		t.Fatalf("the warm-up turn reached the fake model (%d requests)", n-1)
	}

	s, err := pool.AcquireNew(ctx, "conv", cfg.Limit, h.opts())
	if err != nil {
		t.Fatal(err)
	}
	id := s.SessionID()
	rec := agenttest.Record(t, s)
	agenttest.Send(t, s, "[echo-history] first")
	init := rec.Next(t, "Init", func(ev streamjson.Event) bool { _, ok := ev.(streamjson.Init); return ok }).(streamjson.Init)
	res := agenttest.NextResult(t, rec)
	if init.SessionID != id || res.SessionID != id || res.IsError || res.Text != "history: (none)" {
		t.Fatalf("first turn on a warmed-up spare: init session %s, result %+v; want a first turn of session %s", init.SessionID, res, id)
	}
	if res.CostUSD != coldRes.CostUSD {
		t.Errorf("first turn costs $%v, a fresh session's $%v: the warm-up turn leaked into the cost", res.CostUSD, coldRes.CostUSD)
	}
	reqs := h.Model.MessagesRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want the cold one and this one", len(reqs))
	}
	if got, want := requestShape(reqs[1]), requestShape(fresh[0]); got != want {
		t.Errorf("first request after the warm-up:\n%s\nwant the shape of a fresh session's:\n%s", got, want)
	}
	// The same system prompt, but for the memory directory, which lies in
	// each session's own state directory.
	memoryDir := regexp.MustCompile("memory at `[^`]*`")
	if got, want := memoryDir.ReplaceAllString(reqs[1].System, "memory at DIR"), memoryDir.ReplaceAllString(fresh[0].System, "memory at DIR"); got != want {
		t.Errorf("system prompt after the warm-up:\n%s\nwant a fresh session's:\n%s", got, want)
	}

	if res := resumedHistory(t, h, pool, cfg.Limit, rec, id, filepath.Join(cfg.StateRoot, id)); res.Text != "history: [echo-history] first" || res.SessionID != id {
		t.Errorf("resumed turn: %+v; want the one real message of session %s", res, id)
	}
}

// requestShape describes a model request's messages: roles, block types,
// and whether each text block is a CLI reminder, the user's text or other.
func requestShape(r fakemodel.Request) string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Role + ":")
		for _, bl := range m.Blocks {
			kind := bl.Type
			if bl.Type == "text" {
				switch {
				case strings.HasPrefix(bl.Text, "<system-reminder>"):
					kind = "reminder"
				case strings.Contains(bl.Text, "[echo-history]"):
					kind = "prompt"
				}
			}
			b.WriteString(" " + kind)
		}
		b.WriteString("\n")
	}
	return b.String()
}
