package core

import (
	"context"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/screen"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds a worker's start (newConversation) and its dispatch of
// each input to the part that handles it: the top of the worker.

// newConversation creates a conversation and its queue; c.mu is held.
//
// takenOver says that its tenure began after another replica's
// (ownership.Tenure.Recover).
func newConversation(c *Core, row store.Conversation, bot *config.Bot, profile *profile.Agent, gone string, p bridges.Platform, st *store.Store, token int64, takenOver bool) *conversation {
	key := bridges.ConversationKey(row.Key)
	lim := p.Limits()
	if lim.EditInterval <= 0 {
		lim.EditInterval = defaultEditInterval
	}
	cv := &conversation{
		core:      c,
		key:       key,
		id:        row.ID,
		bot:       bot,
		profile:   profile,
		platform:  p,
		agentGone: gone,
		limits:    lim,
		budget:    c.budgets.For(key),
		log:       c.log.With("key", key, "conversation", row.ID),
		row:       row,
		st:        st,
		token:     token,
		taken:     takenOver,
		resume:    row.SessionID != "",
		inflight:  make(map[string]sentMsg),
		spared:    make(map[string]int),
		timers:    make(map[timerKey]pendingTimer),
	}
	cv.screen = screen.New(screen.Config{Worker: screenWorker{cv}, Platform: p, Key: key, ID: row.ID,
		Limits: lim, Budget: cv.budget, Store: st, Now: c.clock.Now, Log: cv.log})
	cv.cards = c.newCards(cv)
	cv.writes = delivery.NewJournal(cv.log, func(d time.Duration) { cv.after(d, timerDisk, "") })
	cv.outbox = delivery.NewOutbox(outboxHost{cv}, st, cv.writes, c.opts.OutboxBackoff)
	cv.q = c.newQueue(cv)
	c.attachHooks(cv)
	return cv
}

// handle is the worker: it dispatches one input.
func (cv *conversation) handle(ctx context.Context, in input) {
	if cv.lost.Load() {
		return // its tenure is over: it is being stopped (conversation.go: loseTenure)
	}
	if cv.core.opts.Ownership != nil {
		ctx = bridges.WithWriteGuard(ctx, cv.writeAllowed)
	}
	switch v := in.(type) {
	case inPoke:
		cv.deliverPending(ctx)
	case inAction:
		cv.cards.OnAction(ctx, v.a)
	case inOperatorAction:
		cv.onOperatorAction(ctx, v)
	case inEvent:
		if v.gen == cv.gen && cv.sess != nil {
			for _, h := range cv.hooks {
				h.AgentEvent(v.ev, cv.core.clock.Now())
			}
			cv.onEvent(ctx, v.ev)
		}
	case inAcquired:
		cv.onAcquired(ctx, v)
	case inWaiting:
		if v.gen == cv.gen && cv.acquiring {
			cv.notice(ctx, "⏳ All agent slots are busy; your message is queued and will be handled as soon as one frees up.")
		}
	case inTimer:
		cv.onTimer(ctx, v)
	case inOutbox:
		if reply, into := cv.screen.CloseCutStream(ctx); reply != "" { // a stream a cut turn left open
			cv.outbox.EditInstead(reply, into) // it was being edited into that reply: the outbox edits it (again)
		}
		cv.outbox.Recover(ctx) // replies left by a previous run or holder (recovery)
		if cv.turn == nil {
			cv.forgetStream(ctx) // a live message the recovered reply was edited into
		}
	case inCall:
		v.f(ctx, cv)
	}
	if cv.rescan.Swap(false) {
		cv.deliverPending(ctx)
	}
	for _, h := range cv.hooks {
		h.AfterInput(ctx)
	}
	switch {
	case cv.q.Closed():
	case !cv.idle():
		cv.cancelTimer(timerRetire, "")
	case !cv.hasTimer(timerRetire, ""):
		cv.after(cv.core.opts.RetireIdleAfter, timerRetire, "")
	}
}

// idle reports whether the worker holds nothing that needs it: no process,
// card, unfinished message, reply to retry or timer.
func (cv *conversation) idle() bool {
	if cv.sess != nil || cv.acquiring || cv.turn != nil || cv.cards.Len() > 0 || len(cv.inflight) > 0 || cv.outbox.Retrying() || cv.resuming ||
		cv.writes.Len() > 0 {
		return false
	}
	for k := range cv.timers {
		if k.kind != timerRetire {
			return false
		}
	}
	return true
}

// onTimer dispatches a fired timer, ignoring stale ones.
func (cv *conversation) onTimer(ctx context.Context, v inTimer) {
	k := timerKey{v.kind, v.id}
	pt, ok := cv.timers[k]
	if !ok || pt.seq != v.seq {
		return // cancelled or replaced
	}
	delete(cv.timers, k)
	switch v.kind {
	case timerLive:
		cv.flushLive(ctx)
	case timerApproval:
		cv.cards.Expire(ctx, v.id)
	case timerOutbox:
		cv.core.waiting.Remove(cv.bot.Name, cv.id) // armed again if it fails again
		cv.outbox.Retry(ctx)
		if cv.turn == nil {
			cv.forgetStream(ctx) // the ended turn's stream, stopped by the reply just posted
		}
	case timerRetry:
		cv.deliverPending(ctx)
	case timerStatus:
		cv.showStatus(ctx)
	case timerProgress:
		cv.progressLine(ctx)
	case timerDisk:
		if cv.writes.Retry(ctx) { // then post the replies it recorded, deliver what waits
			cv.outbox.Flush(ctx)
			if cv.turn == nil {
				cv.forgetStream(ctx)
			}
			cv.deliverPending(ctx)
		}
	case timerResume:
		cv.resumeTimedOut(ctx, v.id)
	case timerRetire:
		if cv.idle() && cv.core.retire(cv) {
			cv.log.Debug("conversation worker retired")
		}
	}
}
