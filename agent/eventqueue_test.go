package agent

import (
	"testing"
	"time"
)

// TestEventQueueUnboundedAndOrdered: pushes never block however slow the
// consumer; everything arrives in order, then the channel closes.
func TestEventQueueUnboundedAndOrdered(t *testing.T) {
	q := newEventQueue()
	done := make(chan struct{})
	go func() { defer close(done); q.run() }()
	const n = 10 * eventsChanBuffer
	pushed := make(chan struct{})
	go func() {
		for i := range n {
			q.push(Lifecycle{UUID: string(rune('a' + i%26)), State: string(rune(i))})
		}
		q.close()
		q.push(Lifecycle{UUID: "after close"}) // ignored
		close(pushed)
	}()
	select {
	case <-pushed:
	case <-time.After(10 * time.Second):
		t.Fatal("push blocked on a consumer that does not read")
	}
	i := 0
	for ev := range q.out {
		if l := ev.(Lifecycle); l.State != string(rune(i)) {
			t.Fatalf("event %d out of order: %+v", i, l)
		}
		i++
	}
	if i != n {
		t.Errorf("got %d events, want %d", i, n)
	}
	<-done
	if q.len() != 0 {
		t.Errorf("%d events left", q.len())
	}
}
