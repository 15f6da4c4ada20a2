package worker

import (
	"context"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/live"
	"github.com/agentbridge/agentbridge/bridges/core/screen"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// quiet reports whether the bot is quiet (config verbosity).
func (cv *conversation) quiet() bool { return cv.bot.Verbosity == config.VerbosityQuiet }

// streams reports whether this conversation shows a turn while it runs
// (screen.Screen.Streams).
func (cv *conversation) streams() bool { return cv.screen.Streams(cv.quiet()) }

// touchLive notes new turn content and shows it when the channel's budget
// allows: the first post waits one edit interval (fast answers then need a
// single post), later edits come at most once per interval.
func (cv *conversation) touchLive(ctx context.Context) {
	t := cv.turn
	if t == nil || !cv.streams() {
		return
	}
	t.Live.Dirty = true
	if cv.timers.Has(timerKey{timerLive, ""}) {
		return
	}
	if wait := cv.screen.FirstWait(t.Turn); wait > 0 {
		cv.timers.After(wait, timerKey{timerLive, ""})
		return
	}
	cv.flushLive(ctx)
}

// flushLive shows the turn's news if the budget allows, else schedules
// itself for when it will.
func (cv *conversation) flushLive(ctx context.Context) {
	if t := cv.turn; t != nil {
		if wait := cv.screen.Flush(ctx, t.Turn); wait > 0 {
			cv.timers.After(wait, timerKey{timerLive, ""})
		}
	}
}

// finishLive gives the live message its final text.
func (cv *conversation) finishLive(ctx context.Context, text string) {
	cv.timers.Cancel(timerKey{timerLive, ""})
	if t := cv.turn; t != nil {
		cv.screen.FinishLive(ctx, t.Turn, text)
	}
}

// forgetStream drops the store's record of the ended turn's stream, unless
// the outbox still has to stop it with the reply.
func (cv *conversation) forgetStream(ctx context.Context) {
	cv.screen.ForgetStream(ctx, cv.outbox.Retrying())
}

func (w screenWorker) MayPost() bool         { return w.cv.mayPost() }
func (w screenWorker) PlatformBack()         { w.cv.host.PlatformBack(w.cv.bot.Name) }
func (w screenWorker) Fenced(err error) bool { return w.cv.fenced(err) }

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
		return screen.ErrTenureOver
	}
	cv.opts.Observer.Shown(cv.key, bridges.Message{Text: text})
	return cv.screen.PostNotice(ctx, text)
}

// Names of a turn's bounded state in agentbridge_memory_evictions_total
// (the core's bounds: bridges/core's state.go).
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
	cv.opts.Metrics.Evicted(evictTurnActivity, t.TrimmedSegs)
	cv.opts.Metrics.Evicted(evictTurnTools, t.ForgotTools)
	cv.log.Info("long turn: its oldest activity was dropped from memory",
		"segments", t.TrimmedSegs, "tool_calls", t.ForgotTools, "max_bytes", live.MaxActivity, "max_tools", live.MaxTools)
}

// onEventsDropped notes that the session's event queue dropped events
// because this worker fell behind (see streamjson.EventsDropped). On an overflow
// the agent is being stopped; its Exit follows as for a crash.
func (cv *conversation) onEventsDropped(ctx context.Context, e streamjson.EventsDropped) {
	cv.opts.Metrics.AgentEventsDropped(cv.bot.Name, e.Count, e.Overflow)
	if !e.Overflow {
		cv.log.Warn("agent progress events dropped: the conversation fell behind the agent", "dropped", e.Count)
		return
	}
	cv.log.Error("agent event queue overflowed: the agent is stopped", "dropped", e.Count, "err", e.Err)
	cv.notice(ctx, "⚠️ The bridge fell too far behind the agent's output, so it stopped the agent.")
}

// The working indicator and progress lines (screen.Screen) wait on the
// worker's timers.

// scheduleStatus arms the working indicator for a turn that just began.
func (cv *conversation) scheduleStatus(ctx context.Context) {
	wait, ok := cv.screen.StatusWait(cv.host.Config().StatusDelay)
	switch {
	case !ok:
	case wait > 0:
		cv.timers.After(wait, timerKey{timerStatus, ""})
	default:
		cv.showStatus(ctx)
	}
}

// showStatus turns the indicator on if a turn is still running.
func (cv *conversation) showStatus(ctx context.Context) {
	if cv.turn != nil {
		cv.screen.ShowStatus(ctx)
	}
}

// clearStatus cancels a pending indicator and turns a shown one off.
func (cv *conversation) clearStatus(ctx context.Context) {
	cv.timers.Cancel(timerKey{timerStatus, ""})
	cv.screen.ClearStatus(ctx)
}

// armProgress schedules the turn's next progress line.
func (cv *conversation) armProgress() {
	if d := cv.screen.ProgressEvery(cv.quiet()); d > 0 {
		cv.timers.After(d, timerKey{timerProgress, ""})
	}
}

// progressLine schedules the turn's next progress line, then shows how
// long the running turn has taken — in that order, so that whoever sees a
// line (a test advancing a clock) finds the next one armed. While a card
// waits for someone nothing is shown: the card says what the turn waits
// for.
func (cv *conversation) progressLine(ctx context.Context) {
	t := cv.turn
	if t == nil {
		return
	}
	cv.armProgress()
	if cv.cards.Len() == 0 {
		cv.screen.ShowProgress(ctx, t.Turn, cv.quiet())
	}
}

// notePlanTool updates the conversation's plan with a tool call (or, with
// r, its result) and, when it changed, has the turn's stream show it
// (render.Plan).
func (cv *conversation) notePlanTool(ctx context.Context, u streamjson.ToolUse, r *streamjson.ToolResult) {
	changed := false
	if r == nil {
		changed = cv.plan.OnToolUse(u)
	} else {
		changed = cv.plan.OnResult(u, *r)
	}
	if !changed || cv.turn == nil {
		return
	}
	cv.turn.Live.Stream.Plan = cv.plan.Snapshot()
	cv.turn.Live.Dirty = true
	cv.touchLive(ctx)
}

// endTurn forgets the running turn.
func (cv *conversation) endTurn(ctx context.Context) {
	if cv.turn == nil {
		return
	}
	cv.timers.Cancel(timerKey{timerLive, ""})
	cv.screen.StopStream(ctx, cv.turn.Turn, "")
	cv.forgetStream(ctx)
	cv.timers.Cancel(timerKey{timerProgress, ""})
	cv.reportBounds(cv.turn)
	cv.turn = nil
	cv.stopping = false
	cv.clearStatus(ctx)
}

// beginTurn returns the running turn, starting one if needed.
func (cv *conversation) beginTurn(ctx context.Context) *turn {
	if cv.turn == nil {
		cv.turn = newTurn(cv.opts.Clock.Now())
		cv.armProgress() // armed before the indicator's platform call: whoever sees it may count on the timer
		cv.scheduleStatus(ctx)
	}
	return cv.turn
}
