package core

import (
	"context"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/live"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// turn is what the worker knows about the running turn: who started it
// and, in live.Turn, what it has shown so far.
type turn struct {
	*live.Turn
	start      time.Time
	requesters map[string]Person  // who may decide its cards besides approvers (sentMsg.deciders of its messages)
	fromLedger bool               // a ledger message started it (else the agent did, e.g. after a background task)
	scheduled  string             // the schedule whose firing it handles, for its cards ("" if none)
	payer      string             // user id of the first of them: the turn's cost counts for them (limits)
	replyTo    string             // Inbound.MsgID of the latest message the turn handles (Message.ReplyTo)
	replyUser  string             // author of that message
	progress   bridges.MessageRef // the turn's progress line (stream.go); ID "" = none yet
}

func newTurn(now time.Time) *turn {
	return &turn{Turn: live.NewTurn(), start: now, requesters: make(map[string]Person)}
}

// streams reports whether this conversation shows a turn while it runs: the
// platform can edit (Editor) and wants no whole answers, and the bot is not
// quiet.
func (cv *conversation) streams() bool {
	_, edits := cv.platform.(bridges.Editor)
	return edits && !cv.limits.WholeAnswers && verbosity(cv.bot) != config.VerbosityQuiet
}

// maxRunes is the platform's message limit.
func (cv *conversation) maxRunes() int {
	if cv.limits.MaxMessageRunes > 0 {
		return cv.limits.MaxMessageRunes
	}
	return render.DefaultMaxRunes
}

// touchLive notes new turn content and shows it when the channel's budget
// allows: the first post waits one edit interval (fast answers then need a
// single post), later edits come at most once per interval.
func (cv *conversation) touchLive(ctx context.Context) {
	t := cv.turn
	if t == nil || !cv.streams() {
		return
	}
	t.Live.Dirty = true
	if cv.hasTimer(timerLive, "") {
		return
	}
	if !t.Live.Posted {
		if wait := t.start.Add(cv.limits.EditInterval).Sub(cv.core.clock.Now()); wait > 0 {
			cv.after(wait, timerLive, "")
			return
		}
	}
	cv.flushLive(ctx)
}

// flushLive posts or edits the live message if the budget allows, else
// schedules itself for when it will.
func (cv *conversation) flushLive(ctx context.Context) {
	t := cv.turn
	if t == nil || !t.Live.Dirty {
		return
	}
	if wait := cv.budget.Take(cv.core.clock.Now(), cv.limits.EditInterval, false); wait > 0 {
		cv.after(wait, timerLive, "")
		return
	}
	t.Live.Dirty = false
	if cv.streamLive(ctx) {
		return
	}
	text := render.Tail(render.Join(t.Segs)+" …", cv.maxRunes())
	if text == t.Live.Shown {
		return
	}
	if !t.Live.Posted {
		if !cv.postLive(ctx, text) {
			return
		}
	} else {
		// Past Limits.EditMaxAge the turn continues in a new message.
		ref, err := cv.editOrPost(ctx, t.Live.Ref, bridges.Message{Text: text}, bridges.Message{Text: text})
		if err != nil {
			cv.log.Warn("edit live message", "err", err)
			return
		}
		if ref.ID != t.Live.Ref.ID && cv.keysLive() {
			cv.recordStream(ctx, ref)
		}
		t.Live.Ref = ref
	}
	t.Live.Shown = text
}

// postLive creates the turn's live message showing text, under the turn's
// key where the platform keys live messages (cutstream.go). It reports
// whether the message exists now.
func (cv *conversation) postLive(ctx context.Context, text string) bool {
	t := cv.turn
	m := bridges.Message{Text: text, ReplyTo: t.replyTo}
	keyed := cv.keysLive() && t.replyTo != ""
	if keyed {
		m.Idem, m.Live = "live:"+cv.id+":"+t.replyTo, true // the turn's key
	}
	ref, err := cv.post(ctx, m)
	if err != nil {
		cv.log.Warn("post live message", "err", err)
		t.Live.Unsure = keyed && !bridges.IsPermanent(err)
		return false
	}
	t.Live.Ref, t.Live.Posted, t.Live.Unsure = ref, true, false
	if keyed {
		cv.recordStream(ctx, ref)
	}
	return true
}

// recoverLive is the turn's end after a keyed live create that may have
// reached the platform (Msg.Unsure): the key is tried once more, so that a
// message the platform stored is found (Discord returns it for its nonce)
// and becomes the answer, instead of staying half-written beside it.
func (cv *conversation) recoverLive(ctx context.Context) {
	t := cv.turn
	if t == nil || t.Live.Posted || !t.Live.Unsure || t.Live.Stream.S != nil || !cv.mayPost() {
		return
	}
	t.Live.Unsure = false
	text := render.Tail(render.Join(t.Segs)+" …", cv.maxRunes())
	if cv.postLive(ctx, text) {
		t.Live.Shown = text
		cv.log.Info("live message found again by its key after a lost answer", "msg_id", t.Live.Ref.ID)
	}
}

// finishLive gives the live message its final text (urgent: it goes ahead of
// other streaming edits in the channel).
func (cv *conversation) finishLive(ctx context.Context, text string) {
	t := cv.turn
	cv.cancelTimer(timerLive, "")
	if t == nil || !t.Live.Posted || text == "" || text == t.Live.Shown {
		return
	}
	cv.budget.Take(cv.core.clock.Now(), cv.limits.EditInterval, true)
	ref, err := cv.editOrPost(ctx, t.Live.Ref, bridges.Message{Text: text}, bridges.Message{Text: text})
	if err != nil {
		cv.log.Warn("finish live message", "err", err)
		return
	}
	t.Live.Ref, t.Live.Shown = ref, text
}

// notice posts a short message from the bridge itself (not via the outbox:
// notices are informational and not retried).
func (cv *conversation) notice(ctx context.Context, text string) {
	if err := cv.postNotice(ctx, text); err != nil {
		cv.log.Warn("post notice", "err", err, "notice", textcut.Truncate(text, 80))
	}
}

// postNotice is notice that returns the error instead of logging it.
func (cv *conversation) postNotice(ctx context.Context, text string) error {
	if !cv.mayPost() {
		return errTenureOver
	}
	cv.budget.Take(cv.core.clock.Now(), cv.limits.EditInterval, true)
	cv.observeShown(bridges.Message{Text: text})
	_, err := cv.platform.Post(ctx, cv.key, bridges.Message{Text: text})
	if err == nil {
		cv.core.platformBack(cv.bot.Name)
	}
	return err
}

// In-memory state that grows with traffic is bounded. Each bound is applied
// where the state grows; what a bound makes the core forget is logged and
// counted in agentbridge_memory_evictions_total (by what). The rest of the
// core's maps are bounded by their life cycle:
//
//   - Core.convs: one worker per active conversation; a worker retires
//     after RetireIdleAfter without a process, card, unfinished message or
//     unposted reply.
//   - Core.budgets: one per channel with a running worker; released with
//     the channel's last worker.
//   - A turn's activity and tool calls: live.MaxActivity, live.MaxTools.
//   - Who was told they may not talk to a bot: strangers.MaxRemembered.
//   - conversation.inflight (until the result that finishes the message,
//     the CLI's completed/cancelled receipt or the process exit), cards
//     (until decided or expired), timers (one per kind and card), spared
//     (until the message is final).
//   - A session's agent events: bounded by the agent package's event queue
//     (streamjson.EventsDropped, counted in agentbridge_agent_events_dropped_total).
//
// Names of bounded state in agentbridge_memory_evictions_total.
const (
	evictTurnTools    = "turn_tools"
	evictTurnActivity = "turn_activity"
)

// reportBounds logs and counts what the ending turn forgot to stay within
// its bounds.
func (cv *conversation) reportBounds(t *turn) {
	if t.TrimmedSegs == 0 && t.ForgotTools == 0 {
		return
	}
	cv.core.opts.Metrics.Evicted(evictTurnActivity, t.TrimmedSegs)
	cv.core.opts.Metrics.Evicted(evictTurnTools, t.ForgotTools)
	cv.log.Info("long turn: its oldest activity was dropped from memory",
		"segments", t.TrimmedSegs, "tool_calls", t.ForgotTools, "max_bytes", live.MaxActivity, "max_tools", live.MaxTools)
}

// onEventsDropped notes that the session's event queue dropped events
// because this worker fell behind (see streamjson.EventsDropped). On an overflow
// the agent is being stopped; its Exit follows as for a crash.
func (cv *conversation) onEventsDropped(ctx context.Context, e streamjson.EventsDropped) {
	cv.core.opts.Metrics.AgentEventsDropped(cv.bot.Name, e.Count, e.Overflow)
	if !e.Overflow {
		cv.log.Warn("agent progress events dropped: the conversation fell behind the agent", "dropped", e.Count)
		return
	}
	cv.log.Error("agent event queue overflowed: the agent is stopped", "dropped", e.Count, "err", e.Err)
	cv.notice(ctx, "⚠️ The bridge fell too far behind the agent's output, so it stopped the agent.")
}

// This file holds how the core spares platform calls beside the
// per-channel budget of posts and edits (delivery.Budget): the working
// indicator shown only once a turn runs long.

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
	if !ok || cv.turn == nil || cv.statusShown || !cv.mayPost() {
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
