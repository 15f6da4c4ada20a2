package agent

import "sync"

// eventsChanBuffer is the buffer of the channel returned by Session.Events.
// Behind it sits an unbounded queue, so the stdout reader never waits for
// a slow consumer.
const eventsChanBuffer = 64

// eventQueue is an unbounded FIFO between the stdout reader (push) and the
// pump goroutine that feeds Session.Events (run). After close, run delivers
// what is queued and then closes the output channel.
type eventQueue struct {
	mu     sync.Mutex
	items  []Event
	closed bool
	wake   chan struct{} // capacity 1: "something changed"
	out    chan Event
}

func newEventQueue() *eventQueue {
	return &eventQueue{wake: make(chan struct{}, 1), out: make(chan Event, eventsChanBuffer)}
}

// push appends ev; it never blocks. Pushing after close is a no-op.
func (q *eventQueue) push(ev Event) {
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, ev)
	}
	q.mu.Unlock()
	q.signal()
}

// close marks the end of the stream: run closes out once drained.
func (q *eventQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *eventQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// len reports how many events wait to be delivered.
func (q *eventQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// run delivers queued events to out in order until the queue is closed and
// empty, then closes out. It blocks while the consumer does not read.
func (q *eventQueue) run() {
	for {
		q.mu.Lock()
		batch := q.items
		q.items = nil
		done := q.closed && len(batch) == 0
		q.mu.Unlock()
		if done {
			close(q.out)
			return
		}
		for _, ev := range batch {
			q.out <- ev
		}
		if len(batch) == 0 {
			<-q.wake
		}
	}
}
