package coord

import (
	"context"
	"sync"
)

// Resync is what a Listen channel receives in place of signals that may
// have been missed: after the listener's connection was lost and restored,
// or when its reader fell too far behind. The reader polls for the work
// the signals stood for. Notify never sends it (it refuses an empty
// payload).
const Resync = ""

// signalQueue carries the payloads of one Listen from whoever receives
// them (a PostgreSQL connection's reader, or Notify in process) to the
// caller's channel. push never blocks: at most max payloads wait, and one
// more replaces them all by a single Resync, so a slow reader costs a
// poll, never memory, a stalled connection or a blocked Notify. It is safe
// for concurrent use.
type signalQueue struct {
	mu     sync.Mutex
	items  []string
	resync bool          // a Resync is due before the items
	wake   chan struct{} // capacity 1: something was queued
	max    int
}

func newSignalQueue(max int) *signalQueue {
	return &signalQueue{wake: make(chan struct{}, 1), max: max}
}

// push queues payload for delivery.
func (q *signalQueue) push(payload string) {
	q.mu.Lock()
	if len(q.items) >= q.max {
		q.items, q.resync = nil, true
	} else {
		q.items = append(q.items, payload)
	}
	q.mu.Unlock()
	q.signal()
}

// missed queues a Resync: signals may have been lost. The ones still
// queued are dropped (the poll covers them).
func (q *signalQueue) missed() {
	q.mu.Lock()
	q.items, q.resync = nil, true
	q.mu.Unlock()
	q.signal()
}

func (q *signalQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// next takes the next payload to deliver, if any.
func (q *signalQueue) next() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.resync:
		q.resync = false
		return Resync, true
	case len(q.items) > 0:
		p := q.items[0]
		q.items = q.items[1:]
		return p, true
	}
	return "", false
}

// deliver sends the queued payloads to out, in order, until ctx ends.
func (q *signalQueue) deliver(ctx context.Context, out chan<- string) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-q.wake:
		}
		for p, ok := q.next(); ok; p, ok = q.next() {
			select {
			case out <- p:
			case <-ctx.Done():
				return
			}
		}
	}
}
