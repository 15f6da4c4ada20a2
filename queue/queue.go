// Package queue provides an ordered, bounded, asynchronous input queue that
// feeds exactly one worker goroutine.
//
// A Queue is meant to own the state of one conversation: every input (a chat
// message, a button click, an agent event, a timer) is pushed to the queue
// and handled by the single worker in push order, so the handler needs no
// locks around that state.
//
// Full-queue policy: the queue holds at most Options.Capacity items that are
// waiting (the one being handled does not count). Push never blocks: when the
// queue is full it returns ErrFull and the item is not queued; the caller
// decides what that means (the bridge keeps chat messages in a durable ledger,
// so a refused push loses nothing). PushWait blocks until there is room, for
// producers that must not drop items and can afford back-pressure (a reader
// of a process's output).
//
// A panic in the handler is recovered, reported through Options.OnPanic and
// logged; the worker carries on with the next item. A handler that runs longer
// than Options.SlowAfter is logged while it is still running and again when
// it returns.
//
// Close stops the queue: later pushes fail with ErrClosed, the context given
// to the running handler is cancelled, items still waiting are discarded, and
// the worker goroutine exits once the running handler returns. Close does not
// wait (so a handler may close its own queue); Wait and Done do.
package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"
)

// Errors returned by Push and PushWait.
var (
	// ErrFull: the queue holds Capacity waiting items; the item was not queued.
	ErrFull = errors.New("queue full")
	// ErrClosed: the queue was closed; the item was not queued.
	ErrClosed = errors.New("queue closed")
)

// Defaults for zero Options fields.
const (
	DefaultCapacity  = 256
	DefaultSlowAfter = 5 * time.Second
)

// Options configure a Queue. The zero value is usable.
type Options[T any] struct {
	// Name identifies the queue in log records.
	Name string
	// Capacity is the maximum number of waiting items; default
	// DefaultCapacity.
	Capacity int
	// SlowAfter is how long a handler may run before it is logged as slow;
	// default DefaultSlowAfter, negative disables the warning.
	SlowAfter time.Duration
	// OnPanic, if set, is called on the worker goroutine after a handler
	// panicked, with the item, the recovered value and the stack. It must
	// not panic itself.
	OnPanic func(item T, recovered any, stack []byte)
	// Logger receives slow-handler warnings and panic reports; default
	// discards.
	Logger *slog.Logger
}

// Handler handles one item. ctx is cancelled when the queue is closed.
type Handler[T any] func(ctx context.Context, item T)

// Queue is an ordered bounded queue with one worker. Create it with New; all
// methods are safe for concurrent use.
type Queue[T any] struct {
	handle Handler[T]
	opts   Options[T]
	log    *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the worker goroutine has returned

	mu     sync.Mutex
	items  []T           // waiting items, oldest first
	closed bool          // no more pushes
	ready  chan struct{} // capacity 1: an item was pushed
	space  chan struct{} // closed (and replaced) when an item leaves the queue
}

// New creates a queue and starts its worker goroutine, which calls handle for
// every pushed item in order until the queue is closed.
func New[T any](handle Handler[T], opts Options[T]) *Queue[T] {
	if opts.Capacity <= 0 {
		opts.Capacity = DefaultCapacity
	}
	if opts.SlowAfter == 0 {
		opts.SlowAfter = DefaultSlowAfter
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Name != "" {
		log = log.With("queue", opts.Name)
	}
	ctx, cancel := context.WithCancel(context.Background())
	q := &Queue[T]{
		handle: handle,
		opts:   opts,
		log:    log,
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
		ready:  make(chan struct{}, 1),
		space:  make(chan struct{}),
	}
	go q.work()
	return q
}

// Push appends item without blocking. It returns ErrFull when Capacity items
// are waiting and ErrClosed after Close; in both cases the item is dropped.
func (q *Queue[T]) Push(item T) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrClosed
	}
	if len(q.items) >= q.opts.Capacity {
		return ErrFull
	}
	q.appendLocked(item)
	return nil
}

// PushWait appends item, waiting while the queue is full. It returns
// ErrClosed if the queue is or becomes closed, or ctx's error (wrapped) if ctx
// ends first; then the item is dropped.
func (q *Queue[T]) PushWait(ctx context.Context, item T) error {
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return ErrClosed
		}
		if len(q.items) < q.opts.Capacity {
			q.appendLocked(item)
			q.mu.Unlock()
			return nil
		}
		space := q.space
		q.mu.Unlock()
		select {
		case <-space:
		case <-q.ctx.Done():
			return ErrClosed
		case <-ctx.Done():
			return fmt.Errorf("queue push: %w", ctx.Err())
		}
	}
}

func (q *Queue[T]) appendLocked(item T) {
	q.items = append(q.items, item)
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// Len returns how many items are waiting (not counting one being handled).
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// Close stops the queue (see the package documentation). It does not wait
// for the worker; it is idempotent and may be called from the handler.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		q.items = nil
		close(q.space)
		q.space = make(chan struct{})
	}
	q.mu.Unlock()
	q.cancel()
}

// Closed reports whether Close was called.
func (q *Queue[T]) Closed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed
}

// Done returns a channel closed when the worker goroutine has exited (after
// Close, once the running handler returned).
func (q *Queue[T]) Done() <-chan struct{} { return q.done }

// Wait blocks until the worker goroutine has exited. Calling it from the
// handler deadlocks.
func (q *Queue[T]) Wait() { <-q.done }

// work is the worker goroutine.
func (q *Queue[T]) work() {
	defer close(q.done)
	for {
		item, ok := q.next()
		if !ok {
			return
		}
		q.run(item)
	}
}

// next waits for the oldest item; ok is false once the queue is closed.
func (q *Queue[T]) next() (item T, ok bool) {
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return item, false
		}
		if len(q.items) > 0 {
			item = q.items[0]
			var zero T
			q.items[0] = zero // let the GC have it
			q.items = q.items[1:]
			if len(q.items) == 0 {
				q.items = q.items[:0:0] // drop the backing array once drained
			}
			close(q.space)
			q.space = make(chan struct{})
			q.mu.Unlock()
			return item, true
		}
		q.mu.Unlock()
		select {
		case <-q.ready:
		case <-q.ctx.Done():
		}
	}
}

// run calls the handler for one item with panic recovery and slow logging.
func (q *Queue[T]) run(item T) {
	start := time.Now()
	var watchdog *time.Timer
	if q.opts.SlowAfter > 0 {
		watchdog = time.AfterFunc(q.opts.SlowAfter, func() {
			q.log.Warn("queue handler is slow", "running_for", time.Since(start).Round(time.Millisecond),
				"item", fmt.Sprintf("%T", item))
		})
	}
	defer func() {
		if watchdog != nil && !watchdog.Stop() {
			q.log.Warn("slow queue handler finished", "took", time.Since(start).Round(time.Millisecond),
				"item", fmt.Sprintf("%T", item))
		}
		if r := recover(); r != nil {
			stack := debug.Stack()
			q.log.Error("queue handler panicked", "panic", fmt.Sprint(r), "item", fmt.Sprintf("%T", item),
				"stack", string(stack))
			if q.opts.OnPanic != nil {
				q.opts.OnPanic(item, r, stack)
			}
		}
	}()
	q.handle(q.ctx, item)
}
