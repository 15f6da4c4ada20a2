package delivery

import (
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
)

// Budget spaces out the posts and edits of one channel to one per interval.
// Urgent operations (final answers, cards, notices) always go at once and
// push the next streaming edit back; streaming edits wait for their turn.
// It is safe for concurrent use: the workers of a channel's threads share it.
type Budget struct {
	mu   sync.Mutex
	next time.Time // earliest time a streaming edit may go

	workers int // conversation workers holding it; guarded by Budgets.mu
}

// MaxBudgetDebt caps, in intervals, how far a burst of urgent operations
// pushes the channel's next streaming edit back: they went out at once
// anyway, and the platform's own limits recover within a few seconds, so a
// burst of fifty quick replies must not stall every live message of the
// channel for fifty intervals.
const MaxBudgetDebt = 4

// Take reserves a slot at now. An urgent reservation always succeeds (and
// returns 0); a streaming one returns how long to wait when the channel is
// still busy, in which case nothing is reserved.
func (b *Budget) Take(now time.Time, interval time.Duration, urgent bool) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !urgent && now.Before(b.next) {
		return b.next.Sub(now)
	}
	b.next = later(b.next, now).Add(interval)
	if limit := now.Add(MaxBudgetDebt * interval); b.next.After(limit) {
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

// budgetKey identifies a channel: platforms rate-limit per channel, and the
// threads of one channel share its budget.
type budgetKey struct{ bot, channel string }

// Budgets are the budgets of the channels that have a running worker. The
// zero value is ready; it is safe for concurrent use.
type Budgets struct {
	mu sync.Mutex
	m  map[budgetKey]*Budget
}

// For returns the shared budget of key's channel for a new worker, which
// releases it with Release.
func (bs *Budgets) For(key bridges.ConversationKey) *Budget {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	k := budgetKey{key.Bot, key.Channel}
	b := bs.m[k]
	if b == nil {
		if bs.m == nil {
			bs.m = make(map[budgetKey]*Budget)
		}
		b = &Budget{}
		bs.m[k] = b
	}
	b.workers++
	return b
}

// Release drops a retiring worker's hold on its channel's budget,
// forgetting the budget with the channel's last worker. (A worker retires
// long after its last post, so the budget's reservation has passed by
// then.)
func (bs *Budgets) Release(key bridges.ConversationKey) {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	k := budgetKey{key.Bot, key.Channel}
	if b := bs.m[k]; b != nil {
		if b.workers--; b.workers <= 0 {
			delete(bs.m, k)
		}
	}
}

// Len is the number of channels with a budget.
func (bs *Budgets) Len() int {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	return len(bs.m)
}

// Reset forgets every budget (the core stopped).
func (bs *Budgets) Reset() {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	bs.m = nil
}
