package bridges

import (
	"context"
	"math/rand/v2"
	"time"
)

// Reconnect back-off bounds. An adapter never gives up on a transient
// connection error: it waits Backoff.Delay between attempts, which grows
// from DefaultReconnectMin and stays at or below the cap. The default cap
// is short enough that a bot answers within a minute of the network's
// return; no setting can make it wait longer than MaxReconnectDelay.
const (
	DefaultReconnectMin = time.Second
	DefaultReconnectMax = 45 * time.Second
	MaxReconnectDelay   = 5 * time.Minute
	minReconnectDelay   = time.Millisecond // the least Min: a delay is never 0
)

// Backoff is the capped exponential back-off with jitter between an
// adapter's reconnect attempts. The zero value uses the defaults. A value
// is safe for concurrent use (it is read only).
type Backoff struct {
	Min time.Duration // the first delay's upper bound; <= 0: DefaultReconnectMin
	Max time.Duration // the cap; <= 0: DefaultReconnectMax; above MaxReconnectDelay: MaxReconnectDelay
	// Pause waits d or until ctx ends (false); nil waits on a real timer.
	// Tests put a virtual clock here to simulate long outages at once.
	Pause func(ctx context.Context, d time.Duration) bool
}

// bounds returns Min and Max after defaults and limits.
func (b Backoff) bounds() (lo, hi time.Duration) {
	lo, hi = b.Min, b.Max
	if lo <= 0 {
		lo = DefaultReconnectMin
	}
	if hi <= 0 {
		hi = DefaultReconnectMax
	}
	hi = min(hi, MaxReconnectDelay)
	lo = min(max(lo, minReconnectDelay), hi)
	return lo, hi
}

// Delay is the wait before the next attempt after attempt failures in a
// row (attempt <= 1: the first retry). The ceiling doubles from Min with
// each failure up to Max; the delay is drawn uniformly from the upper
// half of the ceiling ("equal jitter"), so that bots and replicas that
// lost the network together do not retry in step. It is always > 0 and
// <= Max (so <= MaxReconnectDelay).
func (b Backoff) Delay(attempt int) time.Duration {
	return b.delay(attempt, rand.Float64())
}

// delay is Delay with the random draw r in [0, 1).
func (b Backoff) delay(attempt int, r float64) time.Duration {
	lo, hi := b.bounds()
	ceil := lo
	for i := 1; i < attempt && ceil < hi; i++ {
		ceil *= 2 // no overflow: ceil < hi <= MaxReconnectDelay before doubling
	}
	ceil = min(ceil, hi)
	if !(r >= 0) { // NaN too
		r = 0
	}
	r = min(r, 1)
	d := ceil/2 + time.Duration(r*float64(ceil-ceil/2))
	return min(max(d, minReconnectDelay/2), hi)
}

// Wait sleeps Delay(attempt) (see Pause); false when ctx ended first.
func (b Backoff) Wait(ctx context.Context, attempt int) bool {
	return b.Sleep(ctx, b.Delay(attempt))
}

// Sleep waits d through Pause, or on a real timer (the function Sleep);
// false when ctx ended first.
func (b Backoff) Sleep(ctx context.Context, d time.Duration) bool {
	if b.Pause != nil {
		return b.Pause(ctx, d)
	}
	return Sleep(ctx, d)
}

// Sleep waits d on a real timer; false when ctx ended first.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
