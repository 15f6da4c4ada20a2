// Package timer holds a conversation worker's timers: Set, one worker's
// pending timers by key on the worker's clock, each handed to the worker
// once when it fires unless it was replaced or cancelled meanwhile.
package timer

import (
	"time"
)

// Timer is a pending call of a clock's AfterFunc.
type Timer interface{ Stop() bool }

// Clock is what a Set needs of a clock (the worker's Clock).
type Clock interface {
	// AfterFunc calls f in its own goroutine after d.
	AfterFunc(d time.Duration, f func()) Timer
}

// Set is one worker's pending timers, at most one per key. Its methods
// run on the worker; fire, which hands a timer that fired to the worker
// (its queue), runs in the clock's goroutine.
type Set[K comparable] struct {
	clock   Clock
	fire    func(k K, seq uint64)
	pending map[K]pending
	seq     uint64
}

type pending struct {
	t   Timer
	seq uint64
}

// NewSet returns an empty set on clock; fire(k, seq) hands the worker
// the timer k that fired, which it gives to Fired.
func NewSet[K comparable](clock Clock, fire func(k K, seq uint64)) *Set[K] {
	return &Set[K]{clock: clock, fire: fire, pending: make(map[K]pending)}
}

// After arms timer k to fire after d, replacing a pending one.
func (s *Set[K]) After(d time.Duration, k K) {
	s.Cancel(k)
	s.seq++
	seq := s.seq
	s.pending[k] = pending{t: s.clock.AfterFunc(d, func() { s.fire(k, seq) }), seq: seq}
}

// Cancel stops timer k if it is pending.
func (s *Set[K]) Cancel(k K) {
	if p, ok := s.pending[k]; ok {
		p.t.Stop()
		delete(s.pending, k)
	}
}

// Has reports whether timer k is pending.
func (s *Set[K]) Has(k K) bool {
	_, ok := s.pending[k]
	return ok
}

// Any reports whether a pending timer's key satisfies f.
func (s *Set[K]) Any(f func(k K) bool) bool {
	for k := range s.pending {
		if f(k) {
			return true
		}
	}
	return false
}

// Fired reports whether the firing (k, seq) that fire handed the worker
// is current, and forgets k if so: false for a timer replaced or
// cancelled after it fired.
func (s *Set[K]) Fired(k K, seq uint64) bool {
	if p, ok := s.pending[k]; !ok || p.seq != seq {
		return false
	}
	delete(s.pending, k)
	return true
}

// Stop stops every pending timer; called once the worker stopped.
func (s *Set[K]) Stop() {
	for k := range s.pending {
		s.Cancel(k)
	}
}
