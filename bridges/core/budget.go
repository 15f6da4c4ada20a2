package core

import (
	"sync"
	"time"
)

// budgetKey identifies a channel: platforms rate-limit per channel, and the
// threads of one channel share its budget.
type budgetKey struct{ bot, channel string }

// budget spaces out the posts and edits of one channel to one per interval.
// Urgent operations (final answers, cards, notices) always go at once and
// push the next streaming edit back; streaming edits wait for their turn.
type budget struct {
	mu   sync.Mutex
	next time.Time // earliest time a streaming edit may go

	workers int // conversation workers holding it; guarded by Core.mu
}

// maxBudgetDebt caps, in intervals, how far a burst of urgent operations
// pushes the channel's next streaming edit back: they went out at once
// anyway, and the platform's own limits recover within a few seconds, so a
// burst of fifty quick replies must not stall every live message of the
// channel for fifty intervals.
const maxBudgetDebt = 4

// take reserves a slot at now. An urgent reservation always succeeds (and
// returns 0); a streaming one returns how long to wait when the channel is
// still busy, in which case nothing is reserved.
func (b *budget) take(now time.Time, interval time.Duration, urgent bool) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !urgent && now.Before(b.next) {
		return b.next.Sub(now)
	}
	b.next = later(b.next, now).Add(interval)
	if limit := now.Add(maxBudgetDebt * interval); b.next.After(limit) {
		b.next = limit
	}
	return 0
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
