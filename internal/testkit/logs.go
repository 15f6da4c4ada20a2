package testkit

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// LogRecorder is a slog.Handler that keeps every record (all levels) for
// the test to check or wait for, and hands each to the hook set with
// SetOnRecord. The zero value is ready to use; it is safe for concurrent
// use.
type LogRecorder struct {
	mu       sync.Mutex
	recs     []slog.Record
	next     int           // Next's cursor
	wake     chan struct{} // signalled on each record
	onRecord func(slog.Record)
}

// Enabled accepts every level.
func (h *LogRecorder) Enabled(context.Context, slog.Level) bool { return true }

// Handle hands r to the hook (outside the lock), then keeps a copy of it,
// so a record Next returns has been through the hook.
func (h *LogRecorder) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	f := h.onRecord
	h.mu.Unlock()
	if f != nil {
		f(r)
	}
	h.mu.Lock()
	h.recs = append(h.recs, r.Clone())
	w := h.wakeLocked()
	h.mu.Unlock()
	select {
	case w <- struct{}{}:
	default:
	}
	return nil
}

// WithAttrs returns h (attributes are not kept).
func (h *LogRecorder) WithAttrs([]slog.Attr) slog.Handler { return h }

// WithGroup returns h (groups are not kept).
func (h *LogRecorder) WithGroup(string) slog.Handler { return h }

// SetOnRecord sets the hook each later record is handed to (nil: none).
func (h *LogRecorder) SetOnRecord(f func(slog.Record)) {
	h.mu.Lock()
	h.onRecord = f
	h.mu.Unlock()
}

// Has reports whether a record of level whose message contains msgPart
// was logged.
func (h *LogRecorder) Has(level slog.Level, msgPart string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.recs {
		if r.Level == level && strings.Contains(r.Message, msgPart) {
			return true
		}
	}
	return false
}

// Next returns the first record that Next has not returned yet, waiting
// up to timeout for it; it fails tb when none comes.
func (h *LogRecorder) Next(tb testing.TB, timeout time.Duration) slog.Record {
	tb.Helper()
	deadline := time.After(timeout)
	for {
		h.mu.Lock()
		if h.next < len(h.recs) {
			r := h.recs[h.next]
			h.next++
			h.mu.Unlock()
			return r
		}
		w := h.wakeLocked()
		h.mu.Unlock()
		select {
		case <-w:
		case <-deadline:
			tb.Fatalf("no log record within %s", timeout)
			return slog.Record{}
		}
	}
}

// wakeLocked returns the wake channel, made on first use. Caller holds mu.
func (h *LogRecorder) wakeLocked() chan struct{} {
	if h.wake == nil {
		h.wake = make(chan struct{}, 1)
	}
	return h.wake
}
