// Package worker is one conversation's life: the worker that drives its
// agent process (turns, the agent's events, delivery of the ledger's
// messages and of the replies, recovery after a crash, the tenure of a
// replica, !resume's exchange, limits) and the handle through which the
// features act on it (Conv) with the seams they fill (ConvFeature,
// Commands, Cards, Files, Observer, SpendGate, AgentTools). The core
// (bridges/core) routes conversations: it makes each worker (New) with
// one Host, its side, and reaches it only through Worker's methods and
// the inputs it hands it; the worker never imports the core.
//
// Its files stand in layers, each using only the ones below it: seams.go
// (what features fill that needs no handle) and state.go (the worker's
// state, the Conv and Worker handles, the Host, the seams that take a
// Conv) at the bottom; conversation.go (primitives); turn.go; limits.go,
// outbox.go, agents.go; deliver.go; recovery.go, resume.go;
// agentevents.go and the Conv methods (features.go, commands.go,
// cards.go); worker.go (New, the dispatch, the inputs) on top. Parts with
// a face of their own live beside it (timer, fallback) or in the core's
// subfolders.
package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/screen"
	"github.com/agentbridge/agentbridge/bridges/core/worker/timer"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/queue"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds a worker's start (New), its dispatch of each input to
// the part that handles it, the inputs the core hands it and the
// Worker's methods the core calls: the top of the worker.

// New makes the worker of conversation p.Row for host h, with its
// queue and the features' parts (cards, hooks); it handles nothing
// until the core pushes an input to it.
func New(h Host, p Params) Worker {
	key := bridges.ConversationKey(p.Row.Key)
	lim := p.Platform.Limits()
	if lim.EditInterval <= 0 {
		lim.EditInterval = defaultEditInterval
	}
	opts := h.Options()
	cv := &conversation{
		host:         h,
		opts:         opts,
		key:          key,
		id:           p.Row.ID,
		bot:          p.Bot,
		profile:      p.Profile,
		platform:     p.Platform,
		agentGone:    p.Gone,
		limits:       lim,
		budget:       p.Budget,
		log:          h.Log().With("key", key, "conversation", p.Row.ID),
		row:          p.Row,
		st:           p.Store,
		token:        p.Token,
		taken:        p.TakenOver,
		resume:       p.Row.SessionID != "",
		inflight:     make(map[string]sentMsg),
		spared:       make(map[string]int),
		limitNoticed: make(agents.LimitNotices),
	}
	runCtx := h.RunCtx()
	cv.timers = timer.NewSet(opts.Clock, func(k timerKey, seq uint64) {
		_ = cv.q.PushWait(runCtx, inTimer{key: k, seq: seq}) // fails only when stopping
	})
	cv.screen = screen.New(screen.Config{Worker: screenWorker{cv}, Platform: p.Platform, Key: key, ID: p.Row.ID,
		Limits: lim, Budget: cv.budget, Store: p.Store, Now: opts.Clock.Now, Log: cv.log})
	cv.cards = newCards(cv)
	cv.writes = delivery.NewJournal(cv.log, func(d time.Duration) { cv.timers.After(d, timerKey{timerDisk, ""}) })
	cv.outbox = delivery.NewOutbox(outboxHost{cv}, p.Store, cv.writes, opts.OutboxBackoff)
	cv.q = queue.New(cv.handle, queue.Options[Input]{
		Name:      key.String(),
		Capacity:  opts.QueueCapacity,
		SlowAfter: opts.SlowHandler,
		Logger:    h.Log(),
		OnPanic: func(in Input, r any, _ []byte) {
			cv.log.Error("conversation worker recovered from a panic", "input", fmt.Sprintf("%T", in), "panic", fmt.Sprint(r))
		},
	})
	for _, f := range opts.ConvFeatures {
		cv.hooks = append(cv.hooks, f.Attach(Conv{cv}))
	}
	return Worker{cv}
}

// defaultEditInterval is the edit interval of a platform that sets none.
const defaultEditInterval = time.Second

// handle is the worker: it dispatches one input.
func (cv *conversation) handle(ctx context.Context, in Input) {
	if cv.lost.Load() {
		return // its tenure is over: it is being stopped (conversation.go: loseTenure)
	}
	if cv.opts.Ownership != nil {
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
				h.AgentEvent(v.ev, cv.opts.Clock.Now())
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
		cv.timers.Cancel(timerKey{timerRetire, ""})
	case !cv.timers.Has(timerKey{timerRetire, ""}):
		cv.timers.After(cv.opts.RetireIdleAfter, timerKey{timerRetire, ""})
	}
}

// idle reports whether the worker holds nothing that needs it: no process,
// card, unfinished message, reply to retry or timer.
func (cv *conversation) idle() bool {
	if cv.sess != nil || cv.acquiring || cv.turn != nil || cv.cards.Len() > 0 || len(cv.inflight) > 0 || cv.outbox.Retrying() || cv.resuming ||
		cv.writes.Len() > 0 {
		return false
	}
	return !cv.timers.Any(func(k timerKey) bool { return k.kind != timerRetire })
}

// onTimer dispatches a fired timer, ignoring stale ones.
func (cv *conversation) onTimer(ctx context.Context, v inTimer) {
	if !cv.timers.Fired(v.key, v.seq) {
		return // cancelled or replaced
	}
	switch v.key.kind {
	case timerLive:
		cv.flushLive(ctx)
	case timerApproval:
		cv.cards.Expire(ctx, v.key.id)
	case timerOutbox:
		cv.host.Waiting().Remove(cv.bot.Name, cv.id) // armed again if it fails again
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
		cv.resumeTimedOut(ctx, v.key.id)
	case timerRetire:
		if cv.idle() && cv.host.Retire(Worker{cv}) {
			cv.log.Debug("conversation worker retired")
		}
	}
}

// The worker as the core holds it: its identity and tenure, its queue.

// Key is the conversation's key; ID its store id.
func (w Worker) Key() bridges.ConversationKey { return w.cv.key }

// ID is the conversation's store id.
func (w Worker) ID() string { return w.cv.id }

// Holds reports whether its tenure, not over, holds the lease of
// fencing token (0 unfenced).
func (w Worker) Holds(token int64) bool { return w.cv.token == token && !w.cv.lost.Load() }

// LoseTenure ends its tenure (once) and has the core drop it
// (Host.Drop); it never blocks.
func (w Worker) LoseTenure(why string) { w.cv.loseTenure(why) }

// MarkLost ends its tenure without dropping it: the core is stopping it.
func (w Worker) MarkLost() { w.cv.lost.Store(true) }

// Push hands in to the worker without waiting (queue.ErrFull,
// queue.ErrClosed: see Full and Stopped); PushWait waits for room until
// ctx ends.
func (w Worker) Push(in Input) error { return w.cv.q.Push(in) }

// PushWait hands in to the worker, waiting for room until ctx ends.
func (w Worker) PushWait(ctx context.Context, in Input) error { return w.cv.q.PushWait(ctx, in) }

// Rescan has the worker deliver the pending ledger messages after the
// input it is handling: one was accepted while its queue was full.
func (w Worker) Rescan() { w.cv.rescan.Store(true) }

// Pending is how many inputs wait in its queue.
func (w Worker) Pending() int { return w.cv.q.Len() }

// Close closes its queue: it handles what waits there and stops.
func (w Worker) Close() { w.cv.q.Close() }

// Closed reports whether its queue is closed.
func (w Worker) Closed() bool { return w.cv.q.Closed() }

// Wait waits until it stopped after Close, and stops its timers.
func (w Worker) Wait() {
	w.cv.q.Wait()
	w.cv.timers.Stop()
}

// Full reports whether err is Push's refusal of a full queue.
func Full(err error) bool { return errors.Is(err, queue.ErrFull) }

// Stopped reports whether err is Push's refusal by a stopped worker.
func Stopped(err error) bool { return errors.Is(err, queue.ErrClosed) }

// Params are what a new worker starts from.
type Params struct {
	Row      store.Conversation
	Bot      *config.Bot
	Profile  *profile.Agent
	Gone     string // a stored !agent profile the bot no longer lists
	Platform bridges.Platform
	Budget   *delivery.Budget // the channel's post budget
	// Store is the store its writes go through (fenced by Token's lease
	// with replicas); TakenOver says the tenure began after another
	// replica's (ownership.Tenure.Recover).
	Store     *store.Store
	Token     int64
	TakenOver bool
}

// Poke tells the worker that pending ledger messages may be deliverable.
func Poke() Input { return inPoke{} }

// RecoverOutbox has the worker post the replies an earlier run or holder
// left pending.
func RecoverOutbox() Input { return inOutbox{} }

// Click is a click on one of the conversation's cards.
func Click(a bridges.Action) Input { return inAction{a} }

// OperatorDecision is a decision taken in the operator view (a bridge
// admin: the bot's approver list does not apply); done receives "" on
// success or the problem.
func OperatorDecision(a bridges.Action, done chan<- string) Input {
	return inOperatorAction{a: a, done: done}
}

// AskBusy has the worker answer whether it is busy with a turn (a turn
// running, a message in flight, an open card, starting or resuming).
func AskBusy(answer func(id string, busy bool)) Input {
	return inCall{func(_ context.Context, cv *conversation) { answer(cv.id, cv.busyWithTurn()) }}
}

// Release has the worker holding session sessionID give it up to
// conversation to, for who's !resume on another replica; answer gets the
// session's summary or why not (ErrSessionBusy, store.ErrSessionMoved).
func Release(sessionID string, to store.Conversation, who Person, answer func(ctx context.Context, summary string, err error)) Input {
	return inCall{func(ctx context.Context, cv *conversation) {
		summary, err := cv.releaseSession(ctx, sessionID, to, who)
		answer(ctx, summary, err)
	}}
}

// Released is the answer of another replica to the !resume of session
// sessionID this worker awaits.
func Released(sessionID, summary string, err error) Input {
	return inCall{func(ctx context.Context, cv *conversation) { cv.remoteAnswer(ctx, sessionID, summary, err) }}
}
