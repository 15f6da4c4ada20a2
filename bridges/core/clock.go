package core

import "time"

// Clock is the core's source of time and timers; tests use a fake one.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d. Stop reports whether
	// it prevented the call.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface{ Stop() bool }

// realClock is Clock over package time.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// RealClock is the real time, the default Clock.
func RealClock() Clock { return realClock{} }
