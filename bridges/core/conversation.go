package core

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds the worker's primitives, used by all its parts: its
// timers, whether it may still post or write (its tenure with replicas),
// ledger marks and small helpers.

// after schedules a timer input; an existing timer of the same kind and id
// is replaced.
func (cv *conversation) after(d time.Duration, kind timerKind, id string) {
	k := timerKey{kind, id}
	if old, ok := cv.timers[k]; ok {
		old.t.Stop()
	}
	cv.timerSeq++
	seq := cv.timerSeq
	q, ctx := cv.q, cv.core.runCtx
	t := cv.core.clock.AfterFunc(d, func() {
		_ = q.PushWait(ctx, inTimer{kind: kind, id: id, seq: seq}) // fails only when stopping
	})
	cv.timers[k] = pendingTimer{t: t, seq: seq}
}

// cancelTimer stops a pending timer.
func (cv *conversation) cancelTimer(kind timerKind, id string) {
	k := timerKey{kind, id}
	if old, ok := cv.timers[k]; ok {
		old.t.Stop()
		delete(cv.timers, k)
	}
}

// hasTimer reports whether a timer is pending.
func (cv *conversation) hasTimer(kind timerKind, id string) bool {
	_, ok := cv.timers[timerKey{kind, id}]
	return ok
}

// stopTimers stops every timer; called after the worker stopped.
func (cv *conversation) stopTimers() {
	for k, t := range cv.timers {
		t.t.Stop()
		delete(cv.timers, k)
	}
}

// spawn runs f in a goroutine tracked by the core (waited for on stop).
func (cv *conversation) spawn(f func()) {
	cv.core.workers.Go(f)
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

// drain discards a session's remaining events.
func drain(s agents.Session) {
	for range s.Events() {
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
	if own := cv.core.opts.Ownership; own != nil && !own.Holding(cv.id) {
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
	own := cv.core.opts.Ownership
	return !cv.lost.Load() && (own == nil || own.Holding(cv.id))
}

// loseTenure marks the worker lost (once) and has it stopped with its
// agent in the background (dropWorker): it must not wait for the worker,
// which may be the caller. It never blocks.
func (cv *conversation) loseTenure(why string) {
	if !cv.lost.CompareAndSwap(false, true) {
		return
	}
	c := cv.core
	cv.log.Warn("stopping the conversation here: this replica lost its lease", "why", why)
	c.workers.Go(func() { c.dropWorker(context.WithoutCancel(c.runCtx), cv) })
}

// sessionBusy reports whether a live session has a background task or a
// turn the core does not see, when the session can tell (agent.Session).
func sessionBusy(s agents.Session) bool {
	b, ok := s.(interface{ Busy() bool })
	return ok && b.Busy()
}

// mention names a user in a message.
func mention(a Person) string { return render.Mention(a.Name, a.ID) }

// observeEvent hands ev to the Observer, if any.
func (cv *conversation) observeEvent(ev streamjson.Event) {
	if o := cv.core.opts.Observer; o != nil {
		o.AgentEvent(cv.key, ev)
	}
}

// observeSent hands ledger message m, sent to the agent as text, to the
// Observer, if any.
func (cv *conversation) observeSent(m store.InboxMessage, text string) {
	if o := cv.core.opts.Observer; o != nil {
		o.Sent(cv.key, m.PlatformMsgID, cmp.Or(m.UserName, m.UserID), text)
	}
}

// observeShown hands m to the Observer, if any.
func (cv *conversation) observeShown(m bridges.Message) {
	if o := cv.core.opts.Observer; o != nil {
		o.Shown(cv.key, m)
	}
}
