package worker

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// onEvent handles one event of the live session.
func (cv *conversation) onEvent(ctx context.Context, ev streamjson.Event) {
	cv.opts.Observer.AgentEvent(cv.key, ev)
	switch e := ev.(type) {
	case streamjson.Init:
		cv.beginTurn(ctx)
	case streamjson.TextDelta:
		if e.ParentToolUseID == "" {
			cv.beginTurn(ctx).AddDelta(e.Text)
			cv.touchLive(ctx)
		}
	case streamjson.AssistantText:
		if e.ParentToolUseID == "" {
			cv.beginTurn(ctx).AddText(e.Text)
			cv.touchLive(ctx)
		}
	case streamjson.ToolUse:
		line := ""
		if !cv.quiet() {
			line = cv.opts.ToolNames.Line(e, cv.profile.Workdir)
			line = cv.showTool(ctx, line, bridges.ToolCall{ID: e.ID, Name: e.Name, Input: string(e.Input)})
		}
		cv.beginTurn(ctx).AddTool(e, line)
		cv.notePlanTool(ctx, e, nil)
		cv.touchLive(ctx)
	case streamjson.ToolResult:
		cv.showTool(ctx, "", bridges.ToolCall{ID: e.ToolUseID, Output: e.Content, IsError: e.IsError, Done: true})
		if cv.turn == nil {
			break
		}
		cv.notePlanTool(ctx, cv.turn.Tools[e.ToolUseID], &e)
		full := cv.bot.Verbosity == config.VerbosityFull
		if full {
			cv.turn.AddToolResult(e)
		}
		if cv.turn.Live.ToolDone(e, full) || full {
			cv.touchLive(ctx)
		}
	case streamjson.PermissionDenied:
		if !cv.quiet() {
			cv.beginTurn(ctx).AddNote("› " + render.CodeSpan(e.ToolName+" refused: "+textcut.OneLine(e.Message, 120)))
			cv.touchLive(ctx)
		}
	case streamjson.PermissionRequest:
		cv.cards.OnPermission(ctx, e)
	case streamjson.PermissionCancelled:
		cv.cards.Close(ctx, e.RequestID, store.DecisionCancelled, "", "⏹ Withdrawn by the agent.")
	case streamjson.Elicitation:
		cv.cards.OnElicitation(ctx, e) // bridges/features/cards/elicit.go
	case streamjson.Lifecycle:
		cv.onLifecycle(ctx, e)
	case streamjson.TaskStarted:
		if !cv.quiet() {
			cv.notice(ctx, "⏳ Background task started: "+textcut.OneLine(textcut.OrBlank(e.Description, e.TaskType), 200))
		}
	case streamjson.TaskNotification:
		cv.notice(ctx, render.TaskNotice(e))
	case streamjson.Notice:
		if e.Level == "warning" || e.Level == "error" {
			cv.notice(ctx, "ℹ️ "+textcut.OneLine(e.Text, 500))
		}
	case streamjson.ResultsLost:
		// The CLI numbered a result the session never read: that turn's
		// reply is missing. Say so rather than leave its asker waiting.
		cv.log.Warn("agent results lost", "first_lost", e.First, "lost", e.Count)
		cv.notice(ctx, render.ResultsLostNotice(e))
	case streamjson.Result:
		cv.onResult(ctx, e)
	case streamjson.Exit:
		cv.onExit(ctx, e)
	case streamjson.LimitHit:
		cv.onLimitHit(ctx, e)
	case streamjson.DecodeError:
		cv.log.Warn("agent wrote an undecodable line", "err", e.Err)
	case streamjson.EventsDropped:
		cv.onEventsDropped(ctx, e)
	default:
		cv.log.Debug("agent event", "type", fmt.Sprintf("%T", ev))
	}
}

// payer is whose spend turn t is: the first of its messages' authors (for
// a schedule's firing its creator, or nobody), or for a turn the agent
// started itself, the last person who wrote to it.
func (cv *conversation) payer(t *turn) string {
	if t.fromLedger {
		return t.payer
	}
	return textcut.OrBlank(t.payer, cv.lastAuthor.ID)
}

// onLifecycle moves a ledger message along its delivery states.
func (cv *conversation) onLifecycle(ctx context.Context, e streamjson.Lifecycle) {
	sm, ours := cv.inflight[e.UUID]
	if !ours {
		cv.log.Debug("lifecycle for a message this worker did not send", "uuid", e.UUID, "state", e.State)
		return
	}
	switch e.State {
	case streamjson.LifecycleStarted:
		// Not recorded: the ledger keeps sent until the turn's result
		// records the message finished with the reply (finishedBy).
		// Recovery delivers a sent and a started message again alike.
		sm.started = true
		cv.inflight[e.UUID] = sm
		t := cv.beginTurn(ctx)
		t.fromLedger = true
		for id, a := range sm.deciders() {
			t.requesters[id] = a
		}
		if r := sm.scheduledRun(cv.opts.RunLabel); r != "" && t.scheduled == "" {
			t.scheduled = r
		}
		if t.payer == "" {
			t.payer = sm.from.ID
		}
		t.ReplyTo, t.ReplyUser = sm.platformID, sm.from.ID
		if cv.stopUnstarted[e.UUID] { // !stop ran before it began (commands.go StopTurn)
			delete(cv.stopUnstarted, e.UUID)
			if err := cv.sess.Interrupt(ctx); err != nil {
				cv.log.Warn("interrupt a turn stopped before it began", "err", err)
			} else {
				cv.stopping = true
			}
		}
	case streamjson.LifecycleCompleted: // one the result did not finish (folded into a turn, or its end not recorded)
		cv.finishInbox(ctx, sm.ledgerID, store.InboxCompleted, "")
		delete(cv.inflight, e.UUID)
		delete(cv.stopUnstarted, e.UUID)
	case streamjson.LifecycleCancelled:
		cv.finishInbox(ctx, sm.ledgerID, store.InboxCancelled, cancelledByAgent)
		delete(cv.inflight, e.UUID)
		delete(cv.stopUnstarted, e.UUID)
	}
}

// cancelledByAgent is the ledger's note on a message the CLI cancelled.
const cancelledByAgent = "cancelled by the agent"

// finishedBy returns the ledger marks of the messages that result r
// finishes, and their agent uuids: those the CLI started and has not
// finished, and those the result names (user_message_uuids: the messages
// folded into its turn, 2.1.330 and later), whatever receipt they last
// had. The CLI reports them completed (cancelled after an interrupt)
// just after the result; recording them with the reply instead means that
// a bridge stopped in between never gives an answered message to the
// agent again, and saves a commit per message.
func (cv *conversation) finishedBy(r streamjson.Result) (marks []store.InboxMark, uuids []string) {
	state, why := store.InboxCompleted, ""
	if r.IsError && cv.stopping {
		state, why = store.InboxCancelled, cancelledByAgent
	}
	named := make(map[string]bool, len(r.UserMessageUUIDs))
	for _, u := range r.UserMessageUUIDs {
		named[u] = true
	}
	for uuid, sm := range cv.inflight {
		if sm.started || named[uuid] {
			marks = append(marks, store.InboxMark{ID: sm.ledgerID, State: state, Why: why})
			uuids = append(uuids, uuid)
		}
	}
	return marks, uuids
}

// finished forgets the messages a recorded result finished (finishedBy):
// their lifecycle receipts, if they still come, change nothing.
func (cv *conversation) finished(uuids []string) {
	for _, u := range uuids {
		delete(cv.spared, cv.inflight[u].ledgerID)
		delete(cv.inflight, u)
	}
}

// onResult ends a turn: usage, the final answer through the outbox and the
// ledger messages it finished (one commit), the live message's final form.
func (cv *conversation) onResult(ctx context.Context, r streamjson.Result) {
	t := cv.beginTurn(ctx)
	cv.opts.Metrics.Result(cv.bot.Name, r.IsError, r.CostUSD)
	usage := store.Usage{
		ConversationID: cv.id, SessionID: r.SessionID, UserID: cv.payer(t), CostUSD: r.CostUSD,
		InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens,
		CacheReadTokens: r.Usage.CacheReadInputTokens, CacheCreationTokens: r.Usage.CacheCreationInputTokens,
		DurationMS: r.Duration.Milliseconds(), NumTurns: r.NumTurns, IsError: r.IsError,
	}
	if r.IsError && render.NoSuchSession(r) {
		cv.addUsage(ctx, usage)
		cv.log.Warn("resume failed; the next spawn starts the session fresh", "session", cv.row.SessionID)
		cv.freshRetry = true
		cv.endTurn(ctx)
		return // the process exits next; its Exit re-delivers the message
	}

	cv.screen.RecoverLive(ctx, t.Turn)
	activity, answer, text, suffix := cv.turnAnswer(t, r)
	streamed := t.Live.Stream.S != nil
	var streamLast []bridges.StreamChunk
	replyInStream := false
	if streamed {
		streamLast, replyInStream = t.EndStream(ctx, cv.log, cv.screen.MaxRunes(), answer, suffix)
	}
	replyInLive := t.Live.Posted && len(activity) == 0
	switch {
	case t.Live.Posted && !replyInLive:
		cv.finishLive(ctx, render.Tail(render.Join(activity), cv.screen.MaxRunes()))
	case !t.Live.Posted && !streamed && len(activity) > 0 && cv.streams():
		// A turn faster than the first live post: its activity leads the reply.
		text = render.Join(activity) + "\n\n" + text
	}
	parts := render.Chunks(text, cv.screen.MaxRunes())
	replies := make([]store.OutboxMessage, len(parts))
	for i, c := range parts {
		replies[i] = store.OutboxMessage{ConversationID: cv.id, Text: c}
	}
	if sm, ok := cv.inflight[r.UserMessageUUID]; ok && r.UserMessageUUID != "" {
		// The CLI names the message this turn answers (user_message_uuid):
		// quote that one rather than the last one that started.
		t.ReplyTo = sm.platformID
	}
	if len(replies) > 0 {
		replies[0].ReplyTo = t.ReplyTo // the first part quotes the user's message
	}
	var rows []store.OutboxMessage
	st, liveRef := cv.st, t.Live.Ref
	var stream delivery.StreamEnd
	if replyInStream { // the reply ends the stream, also when recorded late
		stream = delivery.StreamEnd{S: t.Live.Stream.S, Last: streamLast}
		t.Live.Stream.S = nil
	}
	marks, done := cv.finishedBy(r)
	kept, err := cv.writes.Record(ctx, delivery.Write{What: "turn's reply", Do: func(ctx context.Context) error {
		var err error
		rows, err = st.EndTurn(ctx, usage, replies, marks...)
		switch {
		case err != nil || len(rows) == 0:
		case replyInLive:
			cv.outbox.EditInstead(rows[0].ID, liveRef) // the live message becomes the reply
			cv.screen.LiveBecomesReply(ctx, st, liveRef, rows[0].ID)
		case replyInStream:
			cv.outbox.StopStreamInstead(rows[0].ID, stream)
		}
		return err
	}})
	if err == nil { // recorded, or kept to be recorded in order
		cv.finished(done)
	}
	switch {
	case kept:
		// Posted once recorded (Journal.Retry): a reply is never posted
		// unrecorded, so it cannot be lost or posted twice.
		cv.notice(ctx, "⚠️ The bridge's disk is full: the agent's answer is kept and will be posted as soon as the bridge can record it.")
	case cv.fenced(err):
		return // another replica holds the conversation: the turn is its to answer
	case err != nil:
		cv.log.Error("store the turn's usage and reply; posting the reply directly", "err", err)
		cv.addUsage(ctx, usage)
		for _, c := range parts {
			cv.notice(ctx, c)
		}
	}
	if !kept && stream.S != nil && (err != nil || len(rows) == 0) { // no reply row ends the stream: end it now
		if serr := stream.S.Stop(ctx, stream.Last); serr != nil {
			cv.log.Warn("stop the turn's stream", "err", serr)
		}
	}
	cv.saveSession(ctx)  // conversation.go: before the reply, so whoever answers next has this turn
	cv.outbox.Flush(ctx) // before endTurn: on Slack the reply clears the thread status
	cv.endTurn(ctx)
	if cv.restartAfterTurn {
		cv.restartAfterTurn = false
		cv.restartProcess(ctx)
	}
}

// turnAnswer composes the answer of turn t ended by r: the activity that
// stays beside it, the answer (the failure's text for an error), and the
// reply's text, which ends with suffix, the footer (none when the bot is
// quiet).
func (cv *conversation) turnAnswer(t *turn, r streamjson.Result) (activity []render.Segment, answer, text, suffix string) {
	activity, answer = t.Final(r.Text)
	if r.IsError { // keep whatever the turn showed; the answer is the failure
		var auth bool
		answer, auth = cv.failureText(r)
		activity = t.Segs
		if auth {
			activity = nil // the CLI's own "Not logged in · Please run /login" text: replaced by the answer
		}
		if cv.stopping {
			answer = "⏹ Stopped."
		}
	}
	quiet := cv.quiet()
	text, suffix = answer, ""
	if !quiet {
		d := r.Duration
		if d <= 0 {
			d = cv.opts.Clock.Now().Sub(t.Start)
		}
		suffix = "\n\n" + render.Footer(d, r.CostUSD)
		if r.NoCost && r.CostUSD == 0 {
			suffix = "\n\n" + render.FooterNoCost(d)
		}
		text = strings.TrimSpace(text + suffix)
	}
	return activity, answer, text, suffix
}

// addUsage records a turn's usage on its own (see onResult).
func (cv *conversation) addUsage(ctx context.Context, u store.Usage) {
	st := cv.st
	if _, err := cv.writes.Record(ctx, delivery.Write{What: "usage",
		Do: func(ctx context.Context) error { return st.AddUsage(ctx, u) }}); err != nil && !cv.fenced(err) {
		cv.log.Error("record usage", "err", err)
	}
}

// showTool hands a tool call to a platform that shows calls in full
// (bridges.ToolViewer) and returns line (a tool line, or "") as a link to
// the call for it; other platforms get line unchanged and no call.
func (cv *conversation) showTool(ctx context.Context, line string, call bridges.ToolCall) string {
	tv, ok := cv.platform.(bridges.ToolViewer)
	if !ok || !render.ToolLinkable(call.ID) {
		return line
	}
	if err := tv.ShowTool(ctx, cv.key, call); err != nil {
		cv.log.Warn("show a tool call", "tool", call.ID, "err", err)
		return line
	}
	return render.ToolLink(line, call.ID)
}

// failureText is the answer shown for a failed result; auth reports that
// the agent could not authenticate (the answer then replaces the turn's text).
func (cv *conversation) failureText(r streamjson.Result) (text string, auth bool) {
	if render.AuthFailed(r) {
		cv.log.Warn("agent could not authenticate with the model API: set ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN in the profile's env",
			"profile", cv.profile.Name, "api_error_status", r.APIErrorStatus)
		return render.AuthHelp(cv.profile.Name, r), true
	}
	return render.ResultError(r), false
}
