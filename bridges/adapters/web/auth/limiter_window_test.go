package auth

import (
	"fmt"
	"math/rand"
	"testing"
	"time"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
}

// guess tries a wrong token from addr as the sign-in handler does: asks,
// and counts a failure if let through. It reports whether it was let.
func guess(l *Limiter, addr string) bool {
	ok, _ := l.Allow(addr)
	if ok {
		l.Failed(addr)
	}
	return ok
}

// TestLimiterWindowsRollOver: one address guessing once a minute for
// two hours gets exactly SigninPerAddr guesses in each window of its own
// (a window starts at the first failure after the last one ended), never
// more; the wait it is told ends exactly where its window does.
func TestLimiterWindowsRollOver(t *testing.T) {
	clock := newFakeClock()
	l := NewLimiter(clock.now)
	const addr = "203.0.113.7"
	var windowStart time.Time
	let := 0
	for minute := 0; minute < 120; minute++ {
		if minute%15 == 0 {
			windowStart = clock.t // the first guess of the minute opens each window
			if minute > 0 && let != SigninPerAddr {
				t.Fatalf("window ending at minute %d: %d guesses let through, want %d", minute, let, SigninPerAddr)
			}
			let = 0
		}
		for try := 0; try < 100; try++ {
			ok, wait := l.Allow(addr)
			if !ok {
				if want := windowStart.Add(SigninWindow).Sub(clock.t); wait != want {
					t.Fatalf("minute %d: refused with wait %v, want %v (the end of the window)", minute, wait, want)
				}
				break
			}
			l.Failed(addr)
			let++
			if let > SigninPerAddr {
				t.Fatalf("minute %d: %d guesses let through in one window, limit %d", minute, let, SigninPerAddr)
			}
		}
		clock.advance(time.Minute)
	}
}

// TestLimiterTotalWindowRollsOver: failures from many addresses trip the
// total limit, which leaves each address that failed before one try per
// window; after the total window ends, a failing address gets its full
// count again, and so on over several windows.
func TestLimiterTotalWindowRollsOver(t *testing.T) {
	clock := newFakeClock()
	l := NewLimiter(clock.now)
	for w := 0; w < 4; w++ {
		// SigninTotal failures spread one per address.
		for i := 0; i < SigninTotal; i++ {
			if !guess(l, fmt.Sprintf("198.51.%d.%d", w, i)) {
				t.Fatalf("window %d: address %d refused before the total limit", w, i)
			}
		}
		// An address that failed once in this window is refused now…
		if ok, wait := l.Allow(fmt.Sprintf("198.51.%d.0", w)); ok || wait != SigninWindow {
			t.Fatalf("window %d: after %d failures in total, a failing address Allow = %v, %v; want refused for %v", w, SigninTotal, ok, wait, SigninWindow)
		}
		// …an address that never failed may try.
		if ok, _ := l.Allow(fmt.Sprintf("192.0.2.%d", w)); !ok {
			t.Fatalf("window %d: a new address refused by the total limit", w)
		}
		clock.advance(SigninWindow - time.Second)
		if ok, _ := l.Allow(fmt.Sprintf("198.51.%d.1", w)); ok {
			t.Fatalf("window %d: refused address let a second before the window ends", w)
		}
		clock.advance(time.Second)
		if ok, _ := l.Allow(fmt.Sprintf("198.51.%d.1", w)); !ok {
			t.Fatalf("window %d: address still refused once the window ended", w)
		}
	}
}

// limiterModel is the reference the randomized test compares with: the
// documented rule, kept as plain lists of failure times.
type limiterModel struct {
	addrStart map[string]time.Time
	addrN     map[string]int
	total     int
	totStart  time.Time
}

func (m *limiterModel) allow(addr string, now time.Time) bool {
	n := 0
	if s, ok := m.addrStart[addr]; ok && now.Sub(s) < SigninWindow {
		n = m.addrN[addr]
	}
	if n >= SigninPerAddr {
		return false
	}
	return !(n > 0 && m.total >= SigninTotal && now.Sub(m.totStart) < SigninWindow)
}

func (m *limiterModel) failed(addr string, now time.Time) {
	if now.Sub(m.totStart) >= SigninWindow {
		m.total, m.totStart = 0, now
	}
	m.total++
	if s, ok := m.addrStart[addr]; !ok || now.Sub(s) >= SigninWindow {
		m.addrStart[addr], m.addrN[addr] = now, 0
	}
	m.addrN[addr]++
}

// TestLimiterMatchesModel: random guesses from a few addresses at random
// moments over many windows get the answers of the model.
func TestLimiterMatchesModel(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		clock := newFakeClock()
		l := NewLimiter(clock.now)
		m := &limiterModel{addrStart: map[string]time.Time{}, addrN: map[string]int{}, totStart: clock.t.Add(-SigninWindow)}
		for step := 0; step < 3000; step++ {
			clock.advance(time.Duration(rng.Intn(40)) * time.Second)
			addr := fmt.Sprintf("10.0.0.%d", rng.Intn(12))
			want := m.allow(addr, clock.t)
			ok, _ := l.Allow(addr)
			if ok != want {
				t.Fatalf("seed %d step %d: Allow(%s) = %v, model says %v", seed, step, addr, ok, want)
			}
			if ok {
				l.Failed(addr)
				m.failed(addr, clock.t)
			}
		}
	}
}

// TestLimiterForgetsLeastRecent: the limiter holds at most max addresses,
// dropping the one that failed least recently.
func TestLimiterForgetsLeastRecent(t *testing.T) {
	clock := newFakeClock()
	l := NewLimiter(clock.now)
	l.max = 3
	for i := 0; i < SigninPerAddr; i++ {
		l.Failed("a")
	}
	l.Failed("b")
	l.Failed("c")
	l.Failed("a") // a is now the most recent
	l.Failed("d") // b goes
	if l.Size() != 3 {
		t.Fatalf("Size = %d, want 3", l.Size())
	}
	if ok, _ := l.Allow("a"); ok {
		t.Fatal("a, recently failing, forgotten")
	}
}
