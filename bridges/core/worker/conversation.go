package worker

import (
	"context"
	"errors"
	"time"

	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds the worker's primitives, used by all its parts: whether
// it may still post or write (its tenure with replicas), whether it is
// busy, ledger marks and small helpers.

// spawn runs f in a goroutine tracked by the core (waited for on stop).
func (cv *conversation) spawn(f func()) {
	cv.host.Go(f)
}

// finishInbox moves a ledger message to state, logging (not failing) a
// refused transition: the ledger is the authority and stays consistent.
// A mark the database cannot take now (a full disk) is kept and made
// later, in order (delivery.Journal).
func (cv *conversation) finishInbox(ctx context.Context, id string, state store.InboxState, why string) {
	st := cv.st
	if _, err := cv.writes.Record(ctx, delivery.Write{What: "ledger " + string(state), MarkID: id,
		Do: func(ctx context.Context) error { return st.MarkInbox(ctx, id, state, why) }}); err != nil && !cv.fenced(err) {
		cv.log.Warn("update ledger", "ledger", id, "state", state, "err", err)
	}
	if state.Final() {
		delete(cv.spared, id) // nothing is redelivered once final
	}
}

// removeTimeout bounds how long the worker waits for the pool to stop a
// process it no longer wants (!new, a mode that needs a restart).
const removeTimeout = 15 * time.Second

// fenced reports whether err is a write refused because this replica no
// longer holds the conversation's lease, and if so marks the worker lost.
// The worker calls it where a failed write would otherwise make it post
// (the turn's reply) or retry.
func (cv *conversation) fenced(err error) bool {
	if !errors.Is(err, store.ErrFenced) {
		return false
	}
	cv.loseTenure("a store write was fenced out: another replica holds the conversation")
	return true
}

// mayPost reports whether the worker may still post or edit in its
// conversation: it is not lost and, with replicas, this replica still
// holds the lease by its own clock. A false answer marks it lost.
func (cv *conversation) mayPost() bool {
	if cv.lost.Load() {
		return false
	}
	if own := cv.opts.Ownership; own != nil && !own.Holding(cv.id) {
		cv.loseTenure("the conversation's lease ran out before this replica renewed it")
		return false
	}
	return true
}

// writeAllowed is the write guard of the worker's platform calls
// (bridges.WithWriteGuard): mayPost without its side effect, asked by the
// adapter as each request leaves, from any goroutine. A worker paused
// between mayPost and its request finds it false when it runs again.
func (cv *conversation) writeAllowed() bool {
	own := cv.opts.Ownership
	return !cv.lost.Load() && (own == nil || own.Holding(cv.id))
}

// loseTenure marks the worker lost (once) and has it stopped with its
// agent in the background (Host.Drop): it must not wait for the worker,
// which may be the caller. It never blocks.
func (cv *conversation) loseTenure(why string) {
	if !cv.lost.CompareAndSwap(false, true) {
		return
	}
	cv.log.Warn("stopping the conversation here: this replica lost its lease", "why", why)
	cv.host.Drop(Worker{cv})
}

// busyWithTurn reports whether the conversation's agent is in a turn: a
// turn running, a message in flight, an open card, or starting.
func (cv *conversation) busyWithTurn() bool {
	return cv.acquiring || cv.turn != nil || len(cv.inflight) > 0 || cv.cards.Len() > 0 || cv.resuming
}

// holdsInput reports whether a hook holds the people's pending messages.
func (cv *conversation) holdsInput() bool {
	for _, h := range cv.hooks {
		if h.HoldsInput() {
			return true
		}
	}
	return false
}

// hookStatusLines are the hooks' lines of !status.
func (cv *conversation) hookStatusLines() string {
	var s string
	for _, h := range cv.hooks {
		s += h.StatusLine()
	}
	return s
}
