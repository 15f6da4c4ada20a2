package pool

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestEvictionSparesJustIdleSessions: a full profile does not evict a
// session that went idle less than EvictMinIdle ago (its user is likely to
// answer at once); the Acquire waits, without a "queued" notice, until the
// session is old enough, then evicts it.
func TestEvictionSparesJustIdleSessions(t *testing.T) {
	r := newSpareRig(t, 0, 1, nil)
	limit := Limit{Profile: "coder", MaxLive: 1, EvictMinIdle: 400 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
	defer cancel()

	a, err := r.pool.Acquire(ctx, "A", limit, r.newOpts())
	if err != nil {
		t.Fatal(err)
	}
	recA := record(t, a)
	send(t, a, "hello")
	nextResult(t, recA)
	waitUntil(t, "A idle", eventTimeout, func() bool { return !a.Busy() })
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
	record(t, b)
	ex := nextExit(t, recA)
	if ex.Reason != "evicted" || waited.Load() {
		t.Errorf("A's exit %+v, queued notice %v: want an eviction without notice", ex, waited.Load())
	}
}
