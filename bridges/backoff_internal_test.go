package bridges

import (
	"context"
	"math"
	"testing"
	"time"
)

// The reconnect delay is never 0 or negative and never above the cap
// (never above MaxReconnectDelay, whatever the settings), for every
// attempt count (overflow included) and every random draw; it grows
// from Min, reaches the cap and jitters within its upper half.
func TestBackoffDelayBounds(t *testing.T) {
	settings := []Backoff{
		{},                                   // defaults: 1 s … 45 s
		{Min: time.Second, Max: time.Hour},   // a cap above 5 min is cut to 5 min
		{Min: 10 * time.Minute, Max: 0},      // Min above the cap
		{Min: -time.Second, Max: -time.Hour}, // nonsense: defaults
		{Min: 1, Max: 2},                     // nanoseconds: raised to the floor
		{Min: 10 * time.Millisecond, Max: 80 * time.Millisecond},
	}
	attempts := []int{math.MinInt, -1, 0, 1, 2, 3, 10, 30, 62, 63, 64, 1000, math.MaxInt}
	draws := []float64{-1, 0, 0.25, 0.5, 0.999999, 1, 2, math.NaN()}
	for _, b := range settings {
		_, hi := b.bounds()
		if hi > MaxReconnectDelay {
			t.Fatalf("%+v: cap %v above %v", b, hi, MaxReconnectDelay)
		}
		for _, n := range attempts {
			for _, r := range draws {
				d := b.delay(n, r)
				if d <= 0 || d > hi || d > MaxReconnectDelay {
					t.Errorf("%+v: delay(%d, %v) = %v, want in (0, %v]", b, n, r, d, hi)
				}
			}
			for range 200 {
				if d := b.Delay(n); d <= 0 || d > hi {
					t.Errorf("%+v: Delay(%d) = %v, want in (0, %v]", b, n, d, hi)
				}
			}
		}
	}
	if d := (Backoff{Max: time.Hour}).delay(100, 0.999999); d < 4*time.Minute || d > MaxReconnectDelay {
		t.Errorf("a long outage waits %v, want close to the 5 min cap", d)
	}
}

// The ceiling doubles from Min up to Max; a delay lies in the upper half
// of its ceiling (jitter), and the default reaches its 45 s cap.
func TestBackoffGrowthAndJitter(t *testing.T) {
	b := Backoff{Min: time.Second, Max: 45 * time.Second}
	ceilings := map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 6: 32 * time.Second, 7: 45 * time.Second, 500: 45 * time.Second}
	for n, ceil := range ceilings {
		if lo, hi := b.delay(n, 0), b.delay(n, 0.9999999); lo != ceil/2 || hi < ceil-time.Millisecond || hi > ceil {
			t.Errorf("attempt %d: delays from %v to %v, want from %v to %v", n, lo, hi, ceil/2, ceil)
		}
	}
	seen := map[time.Duration]bool{}
	for range 50 {
		seen[b.Delay(10)] = true
	}
	if len(seen) < 10 {
		t.Errorf("50 delays at the cap took %d values: no jitter", len(seen))
	}
	if (Backoff{}).delay(100, 1) != DefaultReconnectMax || (Backoff{}).delay(1, 1) != DefaultReconnectMin {
		t.Errorf("the zero Backoff does not use the defaults")
	}
}

// Wait goes through Pause when set and stops when ctx ends.
func TestBackoffWait(t *testing.T) {
	var got []time.Duration
	b := Backoff{Min: time.Minute, Max: time.Minute, Pause: func(_ context.Context, d time.Duration) bool {
		got = append(got, d)
		return true
	}}
	if !b.Wait(t.Context(), 3) || len(got) != 1 || got[0] < 30*time.Second || got[0] > time.Minute {
		t.Errorf("Wait through Pause: %v", got)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if (Backoff{Min: time.Hour}).Wait(ctx, 1) {
		t.Error("Wait on an ended context returned true")
	}
	if !(Backoff{Min: time.Millisecond, Max: time.Millisecond}).Wait(t.Context(), 1) {
		t.Error("a real 1 ms wait failed")
	}
}
