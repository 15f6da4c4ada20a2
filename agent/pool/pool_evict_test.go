package pool

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestEvictionSparesJustIdleSessions: a full profile does not evict a
// session that went idle less than EvictMinIdle ago (its user is likely to
// answer at once); the Acquire waits, without a "queued" notice, until the
// session is old enough, then evicts it.
func TestEvictionSparesJustIdleSessions(t *testing.T) {
	r := newSpareRig(t, 0, 1, nil)
	limit := Limit{Profile: "coder", MaxLive: 1, EvictMinIdle: 400 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.EventTimeout)
	defer cancel()

	a, err := r.pool.Acquire(ctx, "A", limit, r.newOpts())
	if err != nil {
		t.Fatal(err)
	}
	recA := agenttest.Record(t, a)
	agenttest.Send(t, a, "hello")
	agenttest.NextResult(t, recA)
	testkit.WaitUntil(t, "A idle", agenttest.EventTimeout, func() bool { return !a.Busy() })
	idleSince := a.LastActive()

	var waited atomic.Bool
	limit.OnWait = func() { waited.Store(true) }
	b, err := r.pool.Acquire(ctx, "B", limit, r.newOpts())
	if err != nil {
		t.Fatal(err)
	}
	if got := time.Since(idleSince); got < limit.EvictMinIdle {
		t.Errorf("B got A's slot %v after A went idle, before EvictMinIdle %v", got, limit.EvictMinIdle)
	}
	agenttest.Record(t, b)
	ex := agenttest.NextExit(t, recA)
	if ex.Reason != "evicted" || waited.Load() {
		t.Errorf("A's exit %+v, queued notice %v: want an eviction without notice", ex, waited.Load())
	}
}
