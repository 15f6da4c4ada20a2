package core

import (
	"context"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
)

// This file holds how the core spares platform calls: the per-channel
// budget of posts and edits, and the working indicator shown only once a
// turn runs long.

// The working indicator (Typer: Slack's thread status or reaction,
// Discord's typing, WhatsApp's composing) costs platform calls, so a turn
// shows it only once it has run for config status_delay without ending:
// a turn that answers sooner costs exactly its reply. Where it is free
// (Limits.FreeTyping: the web console) it is shown at once. The indicator is
// cleared when the turn ends, after its reply is posted, so that an
// adapter whose post already clears it (Slack's thread status) needs no
// call of its own (see Typer).

// scheduleStatus arms the indicator for a turn that just began.
func (cv *conversation) scheduleStatus(ctx context.Context) {
	if _, ok := cv.platform.(bridges.Typer); !ok || cv.statusShown {
		return
	}
	if d := cv.core.cfg().StatusDelay; d > 0 && !cv.limits.FreeTyping {
		cv.after(d, timerStatus, "")
		return
	}
	cv.showStatus(ctx)
}

// showStatus turns the indicator on if a turn is still running.
func (cv *conversation) showStatus(ctx context.Context) {
	ty, ok := cv.platform.(bridges.Typer)
	if !ok || cv.turn == nil || cv.statusShown {
		return
	}
	cv.statusShown = true
	if err := ty.SetTyping(ctx, cv.key, true); err != nil {
		cv.log.Debug("show working indicator", "err", err)
	}
}

// clearStatus cancels a pending indicator and turns a shown one off.
func (cv *conversation) clearStatus(ctx context.Context) {
	cv.cancelTimer(timerStatus, "")
	if !cv.statusShown {
		return
	}
	cv.statusShown = false
	if err := cv.platform.(bridges.Typer).SetTyping(ctx, cv.key, false); err != nil {
		cv.log.Debug("clear working indicator", "err", err)
	}
}

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
