package queue

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestOrderAndSingleWorker(t *testing.T) {
	const n = 1000
	var (
		mu      sync.Mutex
		got     []int
		running int
		overlap bool
	)
	done := make(chan struct{})
	q := New(func(ctx context.Context, v int) {
		mu.Lock()
		running++
		if running > 1 {
			overlap = true
		}
		mu.Unlock()
		mu.Lock()
		got = append(got, v)
		running--
		if len(got) == n {
			close(done)
		}
		mu.Unlock()
	}, Options[int]{Capacity: n})
	defer func() { q.Close(); q.Wait() }()
	for i := range n {
		if err := q.Push(i); err != nil {
			t.Fatalf("push %d: %v", i, err)
		}
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("items not handled")
	}
	mu.Lock()
	defer mu.Unlock()
	if overlap {
		t.Error("handler ran concurrently with itself")
	}
	for i, v := range got {
		if v != i {
			t.Fatalf("item %d = %d: order not preserved", i, v)
		}
	}
}

func TestFullPolicy(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	q := New(func(ctx context.Context, v int) {
		select {
		case started <- struct{}{}:
		default:
		}
		<-release
	}, Options[int]{Capacity: 2})
	defer func() { close(release); q.Close(); q.Wait() }()

	if err := q.Push(0); err != nil { // taken by the worker
		t.Fatal(err)
	}
	<-started
	for i := 1; i <= 2; i++ {
		if err := q.Push(i); err != nil {
			t.Fatalf("push %d: %v", i, err)
		}
	}
	if err := q.Push(3); !errors.Is(err, ErrFull) {
		t.Fatalf("push beyond capacity: got %v, want ErrFull", err)
	}
	if got := q.Len(); got != 2 {
		t.Fatalf("Len = %d, want 2", got)
	}

	// PushWait blocks while full and honours its context.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := q.PushWait(ctx, 4); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("PushWait on full queue: got %v, want deadline exceeded", err)
	}
}

// The worker holds item 1 and item 2 fills the queue: PushWait of 3
// blocks until the worker takes 2, and the order is kept. (synctest:
// "blocked" is a fact the bubble reports, not a guess after a sleep.)
func TestPushWaitUnblocksWhenSpaceFrees(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got []int
		gate := make(chan struct{})
		q := New(func(ctx context.Context, v int) {
			<-gate
			got = append(got, v) // read only after synctest.Wait below
		}, Options[int]{Capacity: 1})
		defer func() { q.Close(); q.Wait() }()
		if err := q.Push(1); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the worker took 1 and waits at the gate
		if err := q.Push(2); err != nil {
			t.Fatal(err)
		}
		pushed := make(chan error, 1)
		go func() { pushed <- q.PushWait(context.Background(), 3) }()
		synctest.Wait()
		select {
		case err := <-pushed:
			t.Fatalf("PushWait returned %v before space freed", err)
		default:
		}
		close(gate)
		if err := <-pushed; err != nil {
			t.Fatalf("PushWait: %v", err)
		}
		synctest.Wait() // the worker handled everything and waits for more
		if !slices.Equal(got, []int{1, 2, 3}) {
			t.Fatalf("handled %v, want [1 2 3]", got)
		}
	})
}

func TestPanicRecovered(t *testing.T) {
	var logs testkit.SyncBuffer
	type report struct {
		item     int
		r        any
		hasStack bool
	}
	reports := make(chan report, 1)
	handled := make(chan int, 10)
	q := New(func(ctx context.Context, v int) {
		if v == 1 {
			panic("boom")
		}
		handled <- v
	}, Options[int]{
		Name:   "conv-1",
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		OnPanic: func(item int, r any, stack []byte) {
			reports <- report{item, r, len(stack) > 0}
		},
	})
	defer func() { q.Close(); q.Wait() }()
	for _, v := range []int{1, 2} {
		if err := q.Push(v); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case r := <-reports:
		if r.item != 1 || r.r != "boom" || !r.hasStack {
			t.Fatalf("report = %+v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("OnPanic not called")
	}
	select {
	case v := <-handled:
		if v != 2 {
			t.Fatalf("handled %d, want 2", v)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("worker did not continue after a panic")
	}
	if s := logs.String(); !strings.Contains(s, "panicked") || !strings.Contains(s, "queue=conv-1") {
		t.Fatalf("panic not logged with the queue name: %s", s)
	}
}

func TestSlowHandlerLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs testkit.SyncBuffer
		done := make(chan struct{})
		q := New(func(ctx context.Context, v int) {
			time.Sleep(60 * time.Millisecond) // the bubble's clock: no real wait
			close(done)
		}, Options[int]{SlowAfter: 10 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		_ = q.Push(1)
		<-done
		q.Close()
		q.Wait()
		s := logs.String()
		for _, want := range []string{"queue handler is slow", "slow queue handler finished"} {
			if !strings.Contains(s, want) {
				t.Errorf("log lacks %q:\n%s", want, s)
			}
		}
	})
}

func TestFastHandlerNotLoggedSlow(t *testing.T) {
	var logs testkit.SyncBuffer
	done := make(chan struct{})
	q := New(func(ctx context.Context, v int) { close(done) },
		Options[int]{SlowAfter: time.Second, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	_ = q.Push(1)
	<-done
	q.Close()
	q.Wait()
	if s := logs.String(); strings.Contains(s, "slow") {
		t.Fatalf("fast handler logged as slow: %s", s)
	}
}

func TestCloseCancelsHandlerAndDiscards(t *testing.T) {
	entered := make(chan struct{})
	var handled []int
	var mu sync.Mutex
	q := New(func(ctx context.Context, v int) {
		mu.Lock()
		handled = append(handled, v)
		mu.Unlock()
		if v == 1 {
			close(entered)
			<-ctx.Done() // the handler sees the cancellation
		}
	}, Options[int]{})
	_ = q.Push(1)
	_ = q.Push(2)
	<-entered
	q.Close()
	q.Wait()
	if err := q.Push(3); !errors.Is(err, ErrClosed) {
		t.Fatalf("push after close: %v", err)
	}
	if err := q.PushWait(context.Background(), 3); !errors.Is(err, ErrClosed) {
		t.Fatalf("PushWait after close: %v", err)
	}
	if !q.Closed() {
		t.Fatal("Closed() = false")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(handled) != 1 {
		t.Fatalf("handled %v after close, want only [1]", handled)
	}
	q.Close() // idempotent
}

func TestCloseFromHandler(t *testing.T) {
	var q *Queue[int]
	q = New(func(ctx context.Context, v int) { q.Close() }, Options[int]{})
	_ = q.Push(1)
	select {
	case <-q.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("worker did not exit after closing its own queue")
	}
}

func TestPushWaitReleasedByClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		q := New(func(ctx context.Context, v int) { <-ctx.Done(); <-gate }, Options[int]{Capacity: 1})
		_ = q.Push(1)
		synctest.Wait() // the worker took 1
		_ = q.Push(2)
		errc := make(chan error, 1)
		go func() { errc <- q.PushWait(context.Background(), 3) }()
		synctest.Wait() // PushWait is blocked on the full queue
		q.Close()
		if err := <-errc; !errors.Is(err, ErrClosed) {
			t.Fatalf("blocked PushWait after Close: %v", err)
		}
		close(gate)
		q.Wait()
	})
}

func TestConcurrentProducers(t *testing.T) {
	const producers, per = 8, 200
	var mu sync.Mutex
	last := make(map[int]int)
	count := 0
	all := make(chan struct{})
	q := New(func(ctx context.Context, v [2]int) {
		mu.Lock()
		defer mu.Unlock()
		if prev, ok := last[v[0]]; ok && v[1] <= prev {
			t.Errorf("producer %d: %d after %d", v[0], v[1], prev)
		}
		last[v[0]] = v[1]
		count++
		if count == producers*per {
			close(all)
		}
	}, Options[[2]int]{Capacity: 16})
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range per {
				if err := q.PushWait(context.Background(), [2]int{p, i}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	select {
	case <-all:
	case <-time.After(10 * time.Second):
		t.Fatal("not all items handled")
	}
	q.Close()
	q.Wait()
}
