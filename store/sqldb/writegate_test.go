package sqldb

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestWriteGateOrder: urgent writers go first, then the others, each class
// in arrival order; a waiter whose context ends leaves the queue and the
// gate still reaches everyone else.
func TestWriteGateOrder(t *testing.T) {
	var g writeGate
	ctx := context.Background()
	if err := g.lock(ctx, false); err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		order []string
		wg    sync.WaitGroup
	)
	queued := func(n int) {
		t.Helper()
		testkit.WaitUntilSeen(t, fmt.Sprintf("%d waiters queued", n), 10*time.Second, func() (bool, string) {
			g.mu.Lock()
			got := len(g.queues[0]) + len(g.queues[1])
			g.mu.Unlock()
			return got == n, fmt.Sprintf("%d queued", got)
		})
	}
	waiter := func(name string, urgent bool) {
		wg.Go(func() {
			if err := g.lock(ctx, urgent); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			g.unlock()
		})
	}
	cancelled, cancel := context.WithCancel(ctx)
	gone := make(chan error, 1)
	go func() { gone <- g.lock(cancelled, true) }()
	queued(1)
	waiter("normal-1", false)
	queued(2)
	waiter("urgent-1", true)
	queued(3)
	waiter("normal-2", false)
	queued(4)
	waiter("urgent-2", true)
	queued(5)
	cancel()
	if err := <-gone; err == nil {
		t.Fatal("a cancelled waiter got the gate")
	}
	queued(4)
	g.unlock()
	wg.Wait()
	if want := []string{"urgent-1", "urgent-2", "normal-1", "normal-2"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if g.held {
		t.Error("the gate is still held")
	}
}
