package pool

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// Defaults for zero auto-spare fields of SpareConfig.
const (
	// DefaultSpareMax bounds an automatic spare count (SpareConfig.Max).
	DefaultSpareMax = 4
	// DefaultSpareShrinkAfter is how long an automatic spare count stays
	// up without a spare handed over (SpareConfig.ShrinkAfter).
	DefaultSpareShrinkAfter = 2 * time.Minute
	// defaultSpareBoot is the boot time assumed before a spare was timed.
	defaultSpareBoot = time.Second
	// memoryRecheck is how often the keeper looks again when memory was
	// short for a spare.
	memoryRecheck = 5 * time.Second
)

// autoSpares is the controller of an automatic spare count: it follows
// the recent arrival rate of new conversations of one profile. The target
// is the number of arrivals expected while one spare boots, rounded up:
// ceil(boot / gap), where gap is an exponentially weighted mean of the
// last gaps between arrivals (the time since the last arrival counts once
// it is longer, so a pause lowers the rate) and boot a weighted mean of
// the spares' measured boot times (spawn until ready, warm-up included).
// The target rises at once and falls back only after shrinkAfter without
// a spare handed over; it is at least 1. Not safe for concurrent use (the
// pool guards it with its mutex); every method takes the time explicitly.
type autoSpares struct {
	arrivals int           // counted so far
	last     time.Time     // of the last arrival
	gap      time.Duration // weighted mean gap between arrivals (after 2 arrivals)
	boot     time.Duration // weighted mean boot time (0 = none measured)
	held     int           // the target, held up until shrinkAfter without use
	usedAt   time.Time     // last hand-over or rise of held
}

// weight is the share of the newest sample in the weighted means.
const weight = 0.5

// arrive records a new conversation at now.
func (a *autoSpares) arrive(now time.Time) {
	if a.arrivals > 0 {
		g := max(now.Sub(a.last), time.Millisecond)
		if a.arrivals == 1 {
			a.gap = g
		} else {
			a.gap = time.Duration(weight*float64(g) + (1-weight)*float64(a.gap))
		}
	}
	a.arrivals++
	a.last = now
}

// used records that a spare was handed over at now.
func (a *autoSpares) used(now time.Time) { a.usedAt = now }

// booted records a spare's measured boot time.
func (a *autoSpares) booted(d time.Duration) {
	if a.boot == 0 {
		a.boot = d
		return
	}
	a.boot = time.Duration(weight*float64(d) + (1-weight)*float64(a.boot))
}

// bootTime is the expected boot time of a spare.
func (a *autoSpares) bootTime() time.Duration {
	if a.boot == 0 {
		return defaultSpareBoot
	}
	return a.boot
}

// recentGap is the current estimate of the gap between arrivals, or 0
// before two arrivals.
func (a *autoSpares) recentGap(now time.Time) time.Duration {
	if a.arrivals < 2 {
		return 0
	}
	return max(a.gap, now.Sub(a.last))
}

// raw is the target the arrival rate asks for at now, before holding and
// bounds: at least 1.
func (a *autoSpares) raw(now time.Time) int {
	g := a.recentGap(now)
	if g <= 0 {
		return 1
	}
	n := int((a.bootTime() + g - 1) / g) // ceil
	return max(n, 1)
}

// target is the number of spares to keep at now, within 1..limit (limit
// <= 0 = DefaultSpareMax): it rises with raw at once and falls to raw once
// no spare was handed over for shrinkAfter.
func (a *autoSpares) target(now time.Time, limit int, shrinkAfter time.Duration) int {
	if limit <= 0 {
		limit = DefaultSpareMax
	}
	r := min(a.raw(now), limit)
	switch {
	case r > a.held:
		a.held, a.usedAt = r, now
	case r < a.held && now.Sub(a.usedAt) >= shrinkAfter:
		a.held = r
	}
	return max(min(a.held, limit), 1)
}

// shrinkIn is how long until target may fall (0 = nothing to wait for).
func (a *autoSpares) shrinkIn(now time.Time, shrinkAfter time.Duration) time.Duration {
	if a.held <= 1 {
		return 0
	}
	return max(a.usedAt.Add(shrinkAfter).Sub(now), time.Millisecond)
}

// refillMargin is how long before the expected next arrival a
// replacement spare should be ready.
const refillMargin = 200 * time.Millisecond

// refillBudget is how long the replacement of a spare just handed over may
// wait for that session's first turn to end (so that its boot does not
// slow that turn down), with ready spares still ready for the next
// arrivals: at most refillWait, and only so long that, booted after it,
// the replacement is ready refillMargin before the arrival expected once
// the ready ones are used, (ready+1) gaps from now. 0 = start it at once.
func (a *autoSpares) refillBudget(now time.Time, refillWait time.Duration, ready int) time.Duration {
	g := a.recentGap(now)
	if g <= 0 {
		return refillWait
	}
	return max(0, min(refillWait, time.Duration(ready+1)*g-a.bootTime()-refillMargin))
}

// wantLocked is how many spares ss should keep at now: cfg.Count, or for
// Auto the controller's target within cfg.Max and the profile's MaxLive.
// Needs p.mu.
func (ss *spareSet) wantLocked(now time.Time) int {
	if !ss.cfg.Auto {
		return ss.cfg.Count
	}
	limit := ss.cfg.Max
	if m := ss.cfg.Limit.MaxLive; m > 0 {
		limit = min(limit, m)
	}
	return ss.auto.target(now, limit, ss.cfg.ShrinkAfter)
}

// memoryShortLocked says whether an automatic spare must not start now
// because less than cfg.SpareMemory is available for it and for each of
// the starting spares, which have not taken theirs yet (fail closed: an
// unreadable figure counts as short). Needs p.mu.
func (p *Pool) memoryShortLocked(ss *spareSet, starting int) bool {
	if !ss.cfg.Auto || ss.cfg.SpareMemory <= 0 {
		return false
	}
	avail, err := p.memAvailable()
	if err != nil {
		if !ss.memShort {
			p.log.Warn("agent: available memory unknown; no further automatic warm spares", "profile", ss.cfg.Limit.Profile, "err", err)
		}
		return true
	}
	return avail < ss.cfg.SpareMemory*int64(starting+1)
}

// memAvailable reads MemAvailable from /proc/meminfo, in bytes.
func memAvailable() (int64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("read available memory: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 2 && string(f[0]) == "MemAvailable:" {
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("read available memory: %w", err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("read available memory: no MemAvailable in /proc/meminfo")
}
