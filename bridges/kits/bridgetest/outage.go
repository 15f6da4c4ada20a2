package bridgetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core"
)

// Outage simulates long network outages in virtual time for an adapter's
// reconnect loop: put Pause in the adapter's bridges.Backoff. A pause
// advances the FakeClock of the core given to Begin (so that the core
// stamps states in the same virtual time) instead of sleeping, records
// the bot's state as the core has it, and ends the outage
// (restore, once) when virtual time reaches its end. Hours of outage take
// milliseconds. Pauses wait for the first Begin, so an outage may start
// before the adapter runs (a bot that cannot connect at start-up).
type Outage struct {
	once    sync.Once
	began   chan struct{} // closed by the first Begin
	mu      sync.Mutex
	clock   *FakeClock
	state   func() bridges.BotStatus
	start   time.Time
	length  time.Duration
	restore func()
	ended   bool
	pauses  []Pause
}

// Pause is one wait of the adapter.
type Pause struct {
	At    time.Time     // virtual time when the adapter began to wait
	D     time.Duration // how long it waited
	State bridges.BotStatus
}

func (o *Outage) init() { o.once.Do(func() { o.began = make(chan struct{}) }) }

// Begin starts an outage of length at the virtual time of core's clock,
// watching bot's state; restore ends it (the caller has broken the
// connection or will right after).
func (o *Outage) Begin(core *Core, bot string, length time.Duration, restore func()) {
	o.init()
	o.mu.Lock()
	first := o.clock == nil
	clock := core.Clock
	o.clock, o.state = clock, BotState(core.Core, bot)
	o.start, o.length, o.restore, o.ended = clock.Now(), length, restore, false
	o.mu.Unlock()
	if first {
		close(o.began)
	}
}

// Window is the current outage's start and end in virtual time.
func (o *Outage) Window() (start, end time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.start, o.start.Add(o.length)
}

// Pause implements bridges.Backoff.Pause.
func (o *Outage) Pause(ctx context.Context, d time.Duration) bool {
	o.init()
	select {
	case <-o.began:
	case <-ctx.Done():
		return false
	}
	o.mu.Lock()
	clock, state := o.clock, o.state
	o.mu.Unlock()
	st := state()
	o.mu.Lock()
	o.pauses = append(o.pauses, Pause{At: clock.Now(), D: d, State: st})
	o.mu.Unlock()
	clock.Advance(d)
	o.mu.Lock()
	var restore func()
	if !o.ended && !clock.Now().Before(o.start.Add(o.length)) {
		o.ended, restore = true, o.restore
	}
	o.mu.Unlock()
	if restore != nil {
		restore()
	}
	time.Sleep(time.Millisecond) // let the real network and goroutines move
	return ctx.Err() == nil
}

// Pauses returns the waits so far.
func (o *Outage) Pauses() []Pause {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]Pause(nil), o.pauses...)
}

// Check fails tb unless, during the current outage, the adapter waited at
// most maxWait each time (never 0), the bot was reconnecting at every
// pause with the last error, with Since at the start of the outage (not
// the last attempt) and a growing attempt count, and the adapter's next
// attempt after the network's return came within returnWithin. It
// returns the number of pauses during the outage.
func (o *Outage) Check(tb testing.TB, maxWait, returnWithin time.Duration) int {
	tb.Helper()
	start, end := o.Window()
	var during []Pause
	retried := false
	for _, p := range o.Pauses() {
		if p.At.Before(start) || !p.At.Before(end) {
			continue
		}
		during = append(during, p)
		if back := p.At.Add(p.D); !back.Before(end) {
			retried = true
			if lag := back.Sub(end); lag > returnWithin {
				tb.Errorf("the first attempt after the network's return came %v after it, want within %v", lag, returnWithin)
			}
		}
	}
	if len(during) == 0 || !retried {
		tb.Fatalf("the adapter waited %d times during the outage and never past its end", len(during))
	}
	last := 0
	for i, p := range during {
		where := fmt.Sprintf("pause %d at +%v", i, p.At.Sub(start))
		if p.D <= 0 || p.D > maxWait {
			tb.Errorf("%s: waited %v, want in (0, %v]", where, p.D, maxWait)
		}
		if p.State.State != bridges.ConnReconnecting || p.State.Reason == "" {
			tb.Errorf("%s: state %+v, want reconnecting with the last error", where, p.State)
			continue
		}
		if !p.State.Since.Equal(start) {
			tb.Errorf("%s: reconnecting since %+v, want since the outage began", where, p.State.Since.Sub(start))
		}
		if p.State.Attempt <= last {
			tb.Errorf("%s: attempt %d after %d", where, p.State.Attempt, last)
		}
		last = p.State.Attempt
	}
	return len(during)
}

// BotState returns a function that reads bot's state in core.
func BotState(core *core.Core, bot string) func() bridges.BotStatus {
	return func() bridges.BotStatus {
		for _, s := range core.BotStates() {
			if s.Bot == bot {
				return s
			}
		}
		return bridges.BotStatus{}
	}
}
