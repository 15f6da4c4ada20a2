package core

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/screen"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/queue"
	"github.com/agentbridge/agentbridge/store"
)

// input is one item of a conversation's queue. The worker goroutine handles
// them one at a time and is the only goroutine touching conversation state.
type input interface{ isInput() }

type (
	inPoke   struct{}                   // pending ledger messages may be deliverable
	inAction struct{ a bridges.Action } // a click on one of our cards
	inEvent  struct {
		gen uint64
		ev  streamjson.Event
	} // from the session of generation gen
	inAcquired struct {
		gen       uint64
		sess      agents.Session
		sessionID string // set by an agents.WarmPool: the session's id (a spare's differs from the one asked for)
		err       error
		// fresh: the session was to be resumed but never finished a turn
		// anywhere (nothing stored, no transcript here): it started anew
		// with its id (resumeOptions).
		fresh bool
	} // Acquire finished
	inWaiting struct{ gen uint64 } // Acquire waits for a free slot
	inTimer   struct {
		kind timerKind
		id   string
		seq  uint64
	} // a timer fired
	inOutbox struct{} // replies an earlier run or holder left pending (Outbox.Recover)
)

func (inPoke) isInput()     {}
func (inAction) isInput()   {}
func (inEvent) isInput()    {}
func (inAcquired) isInput() {}
func (inWaiting) isInput()  {}
func (inTimer) isInput()    {}
func (inOutbox) isInput()   {}

// timerKind names what a timer is for.
type timerKind int

const (
	timerLive     timerKind = iota // flush the live message
	timerApproval                  // a card's approval timeout (id = card id)
	timerOutbox                    // retry posting replies
	timerRetry                     // retry delivering after a store error
	timerRetire                    // stop the worker if it is still idle
	timerStatus                    // show the working indicator (status_delay)
	timerProgress                  // post a progress line of a long turn (stream.go)
	timerDisk                      // retry the writes a full disk refused (delivery.Journal)
	timerResume                    // stop waiting for another replica's answer to !resume (id = session id)
)

type timerKey struct {
	kind timerKind
	id   string
}

type pendingTimer struct {
	t   Timer
	seq uint64
}

// Person is who wrote a message or a command: a person's platform user
// id and display name.
type Person struct{ ID, Name string }

// sentMsg is a ledger message written to the agent and not finished yet.
type sentMsg struct {
	ledgerID   string
	platformID string // Inbound.MsgID
	from       Person // the author; for a schedule's firing its creator ("" for nobody) and the schedule's header as name
	origin     Origin
	scheduleID int64 // OriginSchedule
	started    bool  // the CLI reported it started: the next result finishes it (onResult)
}

// deciders are who may decide the cards of a turn that handles m, besides
// the bot's approvers and admins: a person's message, its author; a
// schedule's firing, the schedule's creator when a person made it, else
// nobody. Never the conversation's owner or anyone else by default.
func (m sentMsg) deciders() map[string]Person {
	out := make(map[string]Person)
	if m.from.ID != "" {
		a := m.from
		if m.origin != OriginPerson {
			a.Name = "" // the header is not their name
		}
		out[a.ID] = a
	}
	return out
}

// scheduledRun names the schedule whose firing m is, for cards ("" when
// m is not one; Scheduler.RunLabel).
func (m sentMsg) scheduledRun(s Scheduler) string {
	if m.origin != OriginSchedule || s == nil {
		return ""
	}
	return s.RunLabel(m.from.Name, m.scheduleID)
}

// conversation is the state of one conversation, owned by its worker.
type conversation struct {
	core     *Core
	key      bridges.ConversationKey
	id       string // store conversation id
	bot      *config.Bot
	profile  *profile.Agent
	platform bridges.Platform
	limits   bridges.Limits
	budget   *delivery.Budget
	screen   *screen.Screen // shows the running turn on platform
	log      *slog.Logger
	q        *queue.Queue[input]
	rescan   atomic.Bool // a message was accepted while the queue was full
	// st is the store the worker writes (and reads) its conversation
	// through: fenced by its tenure's lease with replicas (ownership.go),
	// the core's store otherwise. token is that lease's fencing token
	// (0 unfenced); lost is set once the tenure is over.
	st    *store.Store
	token int64
	lost  atomic.Bool
	taken bool // the tenure began after another replica's (ownership.Tenure.Recover)

	// Owned by the worker goroutine.
	row                store.Conversation // settings: session id, overrides
	sess               agents.Session
	gen                uint64 // generation of sess; events of older ones are ignored
	acquiring          bool
	resume             bool               // the next spawn resumes row.SessionID
	freshRetry         bool               // the resume failed: spawn the same id fresh once
	inflight           map[string]sentMsg // agent message uuid → what was sent, until finished
	spared             map[string]int     // ledger id → resets that were no crash (a failed resume)
	turn               *turn
	cards              CardSet         // open cards (CoreOptions.Cards)
	lastAuthor         Person          // of the last person's message sent to the agent
	lastSent           *sentMsg        // the last message sent to the agent (nil: none since the worker started)
	stopping           bool            // !stop asked for an interrupt
	stopUnstarted      map[string]bool // uuids sent but not begun when !stop ran: each is interrupted as it begins
	resuming           bool            // !resume waits for the session's conversation: send nothing meanwhile
	awaitedSession     string          // !resume waits for another replica's answer about this session (resume.go)
	restartAfterTurn   bool            // a setting needs a new process once the turn ends
	hooks              []ConvHook      // the features' parts of this worker (features.go)
	bypassRefusalShown bool            // told that a stored bypassPermissions is not applied
	agentGone          string          // the !agent profile the bot no longer lists: back to the default at the next message
	timers             map[timerKey]pendingTimer
	timerSeq           uint64
	outbox             *delivery.Outbox     // the final replies to post
	writes             *delivery.Journal    // writes a full disk refused, oldest first
	plan               render.Plan          // the agent's to-do list (stream.go)
	limitNoticed       map[string]time.Time // resource limit → when its last hit was told (limits.go)
}

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
		return // its tenure is over: it is being stopped (ownership.go)
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

// spawn runs f in a goroutine tracked by the core (waited for on stop).
func (cv *conversation) spawn(f func()) {
	cv.core.workers.Go(f)
}
