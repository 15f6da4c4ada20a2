package pool

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestAutoSparesBackToBackRealCLI runs new conversations of the real CLI
// back to back (each right after the previous one's answer) on a pool
// with warm_spares: auto: the count rises with the arrivals, and most of
// them get a warm spare (at least 3 of 8: one spare boots at a time, and
// on a loaded machine a boot with its warm-up turn takes longer than a
// turn). A fixed count never rises. The number that got one is logged.
func TestAutoSparesBackToBackRealCLI(t *testing.T) {
	const n = 8
	h := &harness{agenttest.NewHarness(t)}
	pool := closedAtCleanup(t, New(testkit.Logger(t)))
	ctx, cancel := context.WithTimeout(context.Background(), 4*agenttest.EventTimeout)
	defer cancel()
	tmpl := h.opts()
	tmpl.SessionID = ""
	cfg := SpareConfig{Limit: Limit{Profile: "coder", MaxLive: n + 4}, Options: tmpl,
		StateRoot: filepath.Join(t.TempDir(), "sessions"), WarmUp: true, Auto: true, Max: 4}
	pool.KeepSpares(cfg)
	testkit.WaitUntil(t, "a ready spare", 2*agenttest.EventTimeout, func() bool { return pool.SpareStatus("coder").Ready == 1 })

	warm, maxWant := 0, 0
	for i := range n {
		opts := h.opts()
		began := time.Now()
		s, err := pool.AcquireNew(ctx, fmt.Sprint("conv", i), cfg.Limit, opts)
		if err != nil {
			t.Fatal(err)
		}
		rec := agenttest.Record(t, s)
		agenttest.Send(t, s, fmt.Sprint("hello ", i))
		res := agenttest.NextResult(t, rec)
		took := time.Since(began)
		spare := s.SessionID() != opts.SessionID
		if spare {
			warm++
		}
		maxWant = max(maxWant, pool.SpareStatus("coder").Want)
		t.Logf("conversation %d: spare %t, first reply %v (%s)", i, spare, took.Round(time.Millisecond), res.Text)
	}
	t.Logf("%d of %d back-to-back conversations got a warm spare; the target rose to %d", warm, n, maxWant)
	if maxWant < 2 {
		t.Errorf("the spare target stayed at %d with conversations back to back", maxWant)
	}
	if warm < 3 {
		t.Errorf("%d of %d back-to-back conversations got a warm spare, want at least 3", warm, n)
	}
	if live := pool.Len(); live > cfg.Limit.MaxLive {
		t.Errorf("the pool holds %d processes, above max_live %d", live, cfg.Limit.MaxLive)
	}
}
