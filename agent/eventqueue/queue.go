// Package eventqueue is the bounded FIFO between an agent session's stdout
// reader and the consumer of its events (agent.Session.Events): pushing
// never blocks, and what a stuck consumer would let grow is coalesced,
// shed or, at last, stopped with an overflow — never a Result, a
// permission request or the Exit.
package eventqueue

import (
	"fmt"
	"sync"

	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// ChanBuffer is the buffer of the channel Out returns (agent.Session.Events).
// Behind it sits the queue, so the stdout reader never waits for a slow
// consumer.
const ChanBuffer = 64

// Default limits of a session's event queue. Far above what a consumer
// that keeps up ever leaves queued (it reads within milliseconds; a turn
// streams a few hundred events a second at most), they only bind when the
// consumer is stuck.
const (
	DefaultMaxEvents = 10_000
	DefaultMaxBytes  = 64 << 20
)

// eventOverhead is the size charged per queued event on top of its payload
// (interface, struct and slice slot), so that many tiny events also count.
const eventOverhead = 64

// Queue is the FIFO between the stdout reader (Push) and the pump
// goroutine that feeds Out (Run). Push never blocks. After Close, Run
// delivers what is queued and then closes the output channel.
//
// The queue is bounded by maxEvents events and maxBytes bytes (payload
// estimate, see eventSize; a single event larger than maxBytes is still
// accepted when it is alone). A push that takes it over a limit makes it,
// in this order:
//
//  1. coalesce adjacent text, thinking and tool-input deltas of the same
//     block into one event each (nothing is lost: consumers concatenate
//     deltas);
//  2. drop the queued streaming deltas and progress reports that consumers
//     may miss (see EventsDropped.Count), leaving one EventsDropped in their
//     place that says how many went;
//  3. if it is still over the limit, overflow: queue EventsDropped with
//     Overflow set, call onOverflow once (the session stops its process,
//     so an Exit follows) and from then on accept only Result,
//     PermissionRequest, PermissionCancelled, Elicitation, Lifecycle and Exit.
//
// So a Result, a permission request or the Exit is never dropped, and
// every drop is announced in the stream. The session's own state (Busy,
// PendingPermissions) is updated before events are queued and does not
// depend on what the queue drops.
type Queue struct {
	mu         sync.Mutex
	items      []streamjson.Event
	bytes      int // eventSize sum of items
	closed     bool
	overflowed bool
	dropped    int           // events dropped in total (for tests and logs)
	wake       chan struct{} // capacity 1: "something changed"
	out        chan streamjson.Event

	maxEvents  int
	maxBytes   int
	onOverflow func(error) // called once, without mu, when the queue overflows; may be nil
}

// New returns an empty queue with the default limits; start its Run.
func New() *Queue {
	return &Queue{
		wake:      make(chan struct{}, 1),
		out:       make(chan streamjson.Event, ChanBuffer),
		maxEvents: DefaultMaxEvents,
		maxBytes:  DefaultMaxBytes,
	}
}

// SetOnOverflow sets the function called (once, from Push) when the queue
// overflows; the session stops its process there. Call it before the first
// Push.
func (q *Queue) SetOnOverflow(f func(error)) {
	q.mu.Lock()
	q.onOverflow = f
	q.mu.Unlock()
}

// Push appends ev, applying the limits described on Queue; it never
// blocks. Pushing after Close is a no-op.
func (q *Queue) Push(ev streamjson.Event) {
	q.mu.Lock()
	if q.closed || q.overflowed && !essential(ev) {
		if !q.closed {
			q.dropped++
		}
		q.mu.Unlock()
		return
	}
	q.items = append(q.items, ev)
	q.bytes += eventSize(ev)
	var overflow func(error)
	var err error
	if q.over() {
		q.coalesce()
		if q.over() {
			q.shed()
		}
		if q.over() && !q.overflowed {
			err = fmt.Errorf("agent event queue overflow: the consumer fell behind by %d events (%d bytes; limits %d events, %d bytes)",
				len(q.items), q.bytes, q.maxEvents, q.maxBytes)
			q.overflowed = true
			marker := streamjson.EventsDropped{Overflow: true, Err: err}
			q.items = append(q.items, marker)
			q.bytes += eventSize(marker)
			overflow = q.onOverflow
		}
	}
	q.mu.Unlock()
	if overflow != nil {
		overflow(err)
	}
	q.signal()
}

// over reports whether the queue is over a limit; mu is held.
func (q *Queue) over() bool {
	return len(q.items) > q.maxEvents || q.bytes > q.maxBytes && len(q.items) > 1
}

// coalesce merges runs of adjacent deltas of the same block; mu is held.
func (q *Queue) coalesce() {
	out := q.items[:0]
	for _, ev := range q.items {
		if n := len(out); n > 0 {
			if merged, ok := mergeDeltas(out[n-1], ev); ok {
				out[n-1] = merged
				continue
			}
		}
		out = append(out, ev)
	}
	clear(q.items[len(out):]) // release what moved
	q.items = out
}

// mergeDeltas returns a and b as one event when both are deltas of the same
// block.
func mergeDeltas(a, b streamjson.Event) (streamjson.Event, bool) {
	switch x := a.(type) {
	case streamjson.TextDelta:
		if y, ok := b.(streamjson.TextDelta); ok && x.ParentToolUseID == y.ParentToolUseID {
			x.Text += y.Text
			return x, true
		}
	case streamjson.ThinkingDelta:
		if y, ok := b.(streamjson.ThinkingDelta); ok {
			x.Text += y.Text
			return x, true
		}
	case streamjson.ToolInputDelta:
		if y, ok := b.(streamjson.ToolInputDelta); ok && x.Index == y.Index && x.ParentToolUseID == y.ParentToolUseID {
			x.PartialJSON += y.PartialJSON
			return x, true
		}
	}
	return nil, false
}

// shed drops every queued droppable event, leaving one EventsDropped where
// the first one was (or adding to a marker already queued); mu is held.
func (q *Queue) shed() {
	out := q.items[:0]
	marker := -1 // index in out of the marker for this shed
	n := 0
	for _, ev := range q.items {
		switch e := ev.(type) {
		case streamjson.EventsDropped:
			if !e.Overflow && marker < 0 {
				marker = len(out) // reuse a marker of an earlier shed
			}
		default:
			if droppable(ev) {
				n++
				if marker < 0 {
					marker = len(out)
					out = append(out, streamjson.EventsDropped{})
				}
				continue
			}
		}
		out = append(out, ev)
	}
	clear(q.items[len(out):])
	q.items = out
	if n > 0 {
		m := q.items[marker].(streamjson.EventsDropped)
		m.Count += n
		q.items[marker] = m
		q.dropped += n
	}
	q.bytes = 0
	for _, ev := range q.items {
		q.bytes += eventSize(ev)
	}
}

// droppable reports whether ev may be dropped when the consumer falls
// behind: streaming deltas other than text, and progress reports.
func droppable(ev streamjson.Event) bool {
	switch ev.(type) {
	case streamjson.ThinkingDelta, streamjson.ToolInputDelta, streamjson.TaskProgress, streamjson.TaskUpdated, streamjson.BackgroundTasks, streamjson.APIRetry, streamjson.StatusChange,
		streamjson.HookCallback, streamjson.Unknown:
		return true
	}
	return false
}

// essential reports whether ev is still queued after an overflow.
func essential(ev streamjson.Event) bool {
	switch ev.(type) {
	case streamjson.Result, streamjson.ResultsLost, streamjson.PermissionRequest, streamjson.PermissionCancelled, streamjson.Elicitation, streamjson.Lifecycle, streamjson.Exit, streamjson.LimitHit:
		return true
	}
	return false
}

// eventSize estimates the memory an event holds: its variable-length
// payload plus eventOverhead.
func eventSize(ev streamjson.Event) int {
	n := eventOverhead
	switch e := ev.(type) {
	case streamjson.Init:
		n += len(e.Raw) + len(e.CWD)
		for _, t := range e.Tools {
			n += len(t)
		}
	case streamjson.TextDelta:
		n += len(e.Text)
	case streamjson.ThinkingDelta:
		n += len(e.Text)
	case streamjson.ToolInputDelta:
		n += len(e.PartialJSON)
	case streamjson.UserText:
		n += len(e.Text)
	case streamjson.AssistantText:
		n += len(e.Text)
	case streamjson.ToolUse:
		n += len(e.Input)
	case streamjson.ToolResult:
		n += len(e.Content)
	case streamjson.PermissionRequest:
		n += len(e.Raw) + len(e.Input) + len(e.Description) + len(e.DecisionReason)
		for _, s := range e.Suggestions {
			n += len(s)
		}
	case streamjson.Elicitation:
		n += len(e.Message) + len(e.Schema) + len(e.URL)
	case streamjson.TaskUpdated:
		n += len(e.Patch)
	case streamjson.Notice:
		n += len(e.Text)
	case streamjson.HookCallback:
		n += len(e.Input)
	case streamjson.Result:
		n += len(e.Raw) + len(e.Text)
		for _, s := range e.Errors {
			n += len(s)
		}
	case streamjson.DecodeError:
		n += len(e.Line)
	case streamjson.Unknown:
		n += len(e.Raw)
	case streamjson.Exit:
		n += len(e.StderrTail)
	}
	return n
}

// Out is the channel Run delivers to, closed once the queue is closed and
// drained.
func (q *Queue) Out() <-chan streamjson.Event { return q.out }

// Close marks the end of the stream: Run closes Out once drained.
func (q *Queue) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *Queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// pop removes and returns the oldest event. done is true once the queue is
// closed and empty.
func (q *Queue) pop() (ev streamjson.Event, ok, done bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return nil, false, q.closed
	}
	ev = q.items[0]
	q.items[0] = nil // let the payload go once delivered
	q.items = q.items[1:]
	if len(q.items) == 0 {
		q.items = nil // release the backing array
	}
	q.bytes -= eventSize(ev)
	return ev, true, false
}

// Run delivers queued events to out in order until the queue is closed and
// empty, then closes out. It blocks while the consumer does not read; an
// event counts against the queue's limits until it is in out.
func (q *Queue) Run() {
	for {
		ev, ok, done := q.pop()
		switch {
		case done:
			close(q.out)
			return
		case ok:
			q.out <- ev
		default:
			<-q.wake
		}
	}
}
