package timer

import (
	"sync"
	"testing"
	"time"
)

// manual is a Clock whose timers fire only when the test says so.
type manual struct {
	mu      sync.Mutex
	pending []*manualTimer
}

type manualTimer struct {
	f       func()
	stopped bool
}

func (t *manualTimer) Stop() bool {
	was := !t.stopped
	t.stopped = true
	return was
}

func (c *manual) AfterFunc(_ time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &manualTimer{f: f}
	c.pending = append(c.pending, t)
	return t
}

// fireAll runs every timer armed so far, stopped or not: a timer that
// fires while the worker replaces it still hands its firing on.
func (c *manual) fireAll() {
	c.mu.Lock()
	ts := c.pending
	c.pending = nil
	c.mu.Unlock()
	for _, t := range ts {
		t.f()
	}
}

type firing struct {
	key string
	seq uint64
}

// TestFiredOnlyTheCurrentTimer: a firing counts once, and only for the
// timer armed last under its key: one that fired (its input queued) and
// was then replaced or cancelled is ignored when the worker reaches it.
func TestFiredOnlyTheCurrentTimer(t *testing.T) {
	clock := &manual{}
	var got []firing
	s := NewSet(clock, func(k string, seq uint64) { got = append(got, firing{k, seq}) })

	s.After(time.Second, "live")
	s.After(time.Second, "card")
	clock.fireAll()              // both fire: their inputs wait in the queue
	s.After(time.Second, "live") // the worker replaces live meanwhile
	s.Cancel("card")             // and cancels card
	if len(got) != 2 {
		t.Fatalf("%d firings handed on, want 2", len(got))
	}
	for _, f := range got {
		if s.Fired(f.key, f.seq) {
			t.Errorf("the stale firing of %s counted", f.key)
		}
	}
	if !s.Has("live") || s.Has("card") {
		t.Fatalf("Has(live)=%v Has(card)=%v, want true false", s.Has("live"), s.Has("card"))
	}
	clock.fireAll()
	if len(got) != 3 || !s.Fired(got[2].key, got[2].seq) {
		t.Fatalf("the replacing live timer's firing did not count (firings %v)", got)
	}
	if s.Has("live") {
		t.Error("a timer that fired is still pending")
	}
	if s.Fired(got[2].key, got[2].seq) {
		t.Error("the same firing counted twice")
	}
}

// TestStopStopsEveryTimer: Stop stops what is pending, and Any sees
// nothing afterwards.
func TestStopStopsEveryTimer(t *testing.T) {
	clock := &manual{}
	s := NewSet(clock, func(string, uint64) {})
	s.After(time.Second, "a")
	s.After(time.Second, "b")
	if !s.Any(func(k string) bool { return k == "b" }) {
		t.Fatal("Any does not see a pending timer")
	}
	s.Stop()
	for _, p := range clock.pending {
		if !p.stopped {
			t.Error("a pending timer was not stopped")
		}
	}
	if s.Any(func(string) bool { return true }) {
		t.Error("timers still pending after Stop")
	}
}
