package pool

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// poolHarness acquires sessions from a pool and records their events.
type poolHarness struct {
	*harness
	pool *Pool
	recs map[*agent.Session]*agenttest.Recorder
	ids  map[string]string // key → session id (the caller owns them)
	mu   sync.Mutex
}

func newPoolHarness(t *testing.T) *poolHarness {
	t.Helper()
	ph := &poolHarness{harness: &harness{agenttest.NewHarness(t)}, pool: New(testkit.Logger(t)), recs: map[*agent.Session]*agenttest.Recorder{}, ids: map[string]string{}}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := ph.pool.Close(ctx); err != nil {
			t.Errorf("pool Close: %v", err)
		}
		ph.mu.Lock()
		defer ph.mu.Unlock()
		for _, r := range ph.recs {
			r.WaitClosed(t)
		}
	})
	return ph
}

// acquire gets key's session; like a real caller it resumes any key it
// has started before.
func (ph *poolHarness) acquire(ctx context.Context, key string, limit Limit) (*agent.Session, *agenttest.Recorder, error) {
	ph.mu.Lock()
	opts := ph.opts()
	if id, ok := ph.ids[key]; ok {
		opts.SessionID, opts.Resume = id, true
	}
	ph.mu.Unlock()
	s, err := ph.pool.Acquire(ctx, key, limit, opts)
	if err != nil {
		return nil, nil, err
	}
	ph.mu.Lock()
	defer ph.mu.Unlock()
	ph.ids[key] = s.SessionID()
	r, ok := ph.recs[s]
	if !ok {
		r = agenttest.Record(ph.TB, s)
		ph.recs[s] = r
	}
	return s, r, nil
}

func (ph *poolHarness) mustAcquire(t *testing.T, key string, limit Limit) (*agent.Session, *agenttest.Recorder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.EventTimeout)
	defer cancel()
	s, r, err := ph.acquire(ctx, key, limit)
	if err != nil {
		t.Fatalf("Acquire(%s): %v", key, err)
	}
	return s, r
}

// TestPoolEvictsLeastRecentlyUsedIdle: with MaxLive 2, a third
// conversation evicts the idle one used longest ago; that one comes back
// later with --resume and its history.
func TestPoolEvictsLeastRecentlyUsedIdle(t *testing.T) {
	ph := newPoolHarness(t)
	limit := Limit{Profile: "coder", MaxLive: 2}

	a, ra := ph.mustAcquire(t, "A", limit)
	agenttest.Send(t, a, "alpha remembers")
	agenttest.NextResult(t, ra)
	b, rb := ph.mustAcquire(t, "B", limit)
	agenttest.Send(t, b, "bravo here")
	agenttest.NextResult(t, rb)
	if again, _ := ph.mustAcquire(t, "A", limit); again != a {
		t.Fatal("Acquire of a live key returned another session")
	}
	testkit.WaitUntil(t, "both idle", 10*time.Second, func() bool { return !a.Busy() && !b.Busy() })
	time.Sleep(20 * time.Millisecond)
	agenttest.Send(t, b, "bravo again") // B is now the most recently active
	agenttest.NextResult(t, rb)
	testkit.WaitUntil(t, "B idle", 10*time.Second, func() bool { return !b.Busy() })

	c, rc := ph.mustAcquire(t, "C", limit)
	ex := agenttest.NextExit(t, ra)
	if !ex.Expected || ex.Reason != "evicted" {
		t.Errorf("A's exit %+v, want an expected eviction", ex)
	}
	if _, ok := ph.pool.Get("A"); ok {
		t.Error("evicted A still in the pool")
	}
	if !b.Alive() || !c.Alive() || ph.pool.Len() != 2 {
		t.Errorf("B alive %v, C alive %v, pool len %d", b.Alive(), c.Alive(), ph.pool.Len())
	}
	agenttest.Send(t, c, "charlie")
	agenttest.NextResult(t, rc)
	testkit.WaitUntil(t, "C idle", 10*time.Second, func() bool { return !c.Busy() })

	// A comes back (resumed) and evicts B, now the least recently used.
	a2, ra2 := ph.mustAcquire(t, "A", limit)
	if a2 == a || a2.SessionID() != a.SessionID() {
		t.Fatalf("A not respawned with its session id: %s vs %s", a2.SessionID(), a.SessionID())
	}
	if ex := agenttest.NextExit(t, rb); ex.Reason != "evicted" {
		t.Errorf("B's exit %+v", ex)
	}
	agenttest.Send(t, a2, "[echo-history]")
	r := agenttest.NextResult(t, ra2)
	if !strings.Contains(r.Text, "alpha remembers") {
		t.Errorf("resumed A lost its history: %q", r.Text)
	}
}

// TestPoolNeverEvictsPendingPermission: a session waiting for an approval
// is not evicted; Acquire waits (OnWait fires once) and proceeds when the
// approval is answered and the turn ends.
func TestPoolNeverEvictsPendingPermission(t *testing.T) {
	ph := newPoolHarness(t)
	var waits atomic.Int32
	limit := Limit{Profile: "p", MaxLive: 1, OnWait: func() { waits.Add(1) }}

	a, ra := ph.mustAcquire(t, "A", limit)
	agenttest.Send(t, a, "[bash touch approved.txt]")
	p := agenttest.NextPermission(t, ra)

	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	_, _, err := ph.acquire(ctx, "B", limit)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire with a busy pool: %v, want deadline exceeded", err)
	}
	if !a.Alive() || waits.Load() != 1 {
		t.Fatalf("A alive %v, OnWait calls %d", a.Alive(), waits.Load())
	}

	got := make(chan error, 1)
	go func() {
		_, _, err := ph.acquire(context.Background(), "B", limit)
		got <- err
	}()
	testkit.WaitUntil(t, "second OnWait", 10*time.Second, func() bool { return waits.Load() == 2 })
	select {
	case err := <-got:
		t.Fatalf("Acquire returned while A waits for approval: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	agenttest.Respond(t, a, p.RequestID, streamjson.Decision{Allow: true})
	agenttest.NextResult(t, ra)
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(agenttest.EventTimeout):
		t.Fatal("Acquire did not proceed after A became idle")
	}
	if ex := agenttest.NextExit(t, ra); ex.Reason != "evicted" {
		t.Errorf("A's exit %+v", ex)
	}
}

// TestPoolIdleTimeout: an idle session is stopped after IdleTimeout, a busy
// one is not.
func TestPoolIdleTimeout(t *testing.T) {
	ph := newPoolHarness(t)
	limit := Limit{Profile: "p", MaxLive: 4, IdleTimeout: 700 * time.Millisecond}
	a, ra := ph.mustAcquire(t, "A", limit)
	agenttest.Send(t, a, "hi")
	agenttest.NextResult(t, ra)
	b, rb := ph.mustAcquire(t, "B", limit)
	agenttest.Send(t, b, "[bash touch waiting.txt]")
	agenttest.NextPermission(t, rb)

	ex := agenttest.NextExit(t, ra)
	if !ex.Expected || ex.Reason != "idle" {
		t.Errorf("exit %+v", ex)
	}
	if _, ok := ph.pool.Get("A"); ok {
		t.Error("idle-stopped A still in the pool")
	}
	time.Sleep(time.Second)
	if !b.Alive() {
		t.Error("B with a pending permission was stopped for idleness")
	}
}

// TestPoolCrashIsForgotten: a killed process leaves the pool; the next
// Acquire starts a new one.
func TestPoolCrashIsForgotten(t *testing.T) {
	ph := newPoolHarness(t)
	limit := Limit{Profile: "p", MaxLive: 1}
	a, ra := ph.mustAcquire(t, "A", limit)
	agenttest.Send(t, a, "first words")
	agenttest.NextResult(t, ra)
	if err := syscall.Kill(a.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if ex := agenttest.NextExit(t, ra); ex.Expected {
		t.Errorf("exit %+v", ex)
	}
	testkit.WaitUntil(t, "pool forgets A", 10*time.Second, func() bool { _, ok := ph.pool.Get("A"); return !ok && ph.pool.Len() == 0 })
	a2, ra2 := ph.mustAcquire(t, "A", limit)
	if a2.PID() == a.PID() {
		t.Error("same PID after crash")
	}
	agenttest.Send(t, a2, "[echo-history]")
	if r := agenttest.NextResult(t, ra2); !strings.Contains(r.Text, "first words") {
		t.Errorf("history after crash: %q", r.Text)
	}
}

// TestPoolConcurrentAcquireSameKey: concurrent Acquires of one key share one
// process.
func TestPoolConcurrentAcquireSameKey(t *testing.T) {
	ph := newPoolHarness(t)
	limit := Limit{Profile: "p", MaxLive: 1}
	opts := ph.opts()
	var wg sync.WaitGroup
	got := make([]*agent.Session, 5)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := ph.pool.Acquire(context.Background(), "K", limit, opts)
			if err != nil {
				t.Error(err)
			}
			got[i] = s
		}()
	}
	wg.Wait()
	for _, s := range got[1:] {
		if s != got[0] {
			t.Fatal("concurrent Acquire started several sessions")
		}
	}
	rec := agenttest.Record(t, got[0])
	ph.mu.Lock()
	ph.recs[got[0]] = rec
	ph.mu.Unlock()
	if ph.pool.Len() != 1 {
		t.Errorf("pool len %d", ph.pool.Len())
	}
}

// TestPoolRemoveAndClose: Remove stops one session; Close stops the rest
// and refuses further Acquires.
func TestPoolRemoveAndClose(t *testing.T) {
	ph := newPoolHarness(t)
	limit := Limit{Profile: "p", MaxLive: 3}
	a, ra := ph.mustAcquire(t, "A", limit)
	_, rb := ph.mustAcquire(t, "B", limit)
	if s, ok := ph.pool.Get("A"); !ok || s != a {
		t.Fatal("Get(A) failed")
	}
	if err := ph.pool.Remove(context.Background(), "A"); err != nil {
		t.Fatal(err)
	}
	if ex := agenttest.NextExit(t, ra); !ex.Expected || ex.Reason != "closed" {
		t.Errorf("A exit %+v", ex)
	}
	if ph.pool.Len() != 1 {
		t.Errorf("pool len %d after Remove", ph.pool.Len())
	}
	if err := ph.pool.Remove(context.Background(), "nope"); err != nil {
		t.Errorf("Remove of an unknown key: %v", err)
	}
	if err := ph.pool.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ex := agenttest.NextExit(t, rb); !ex.Expected || ex.Reason != "closed" {
		t.Errorf("B exit %+v", ex)
	}
	if _, _, err := ph.acquire(context.Background(), "C", limit); !errors.Is(err, ErrClosed) {
		t.Errorf("Acquire after Close: %v", err)
	}
}
