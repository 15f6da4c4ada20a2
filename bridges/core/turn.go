package core

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/config"
)

// turn is what the worker knows about the running turn: who started it and
// what it has shown so far.
type turn struct {
	start      time.Time
	requesters map[string]author // who may decide its cards besides approvers (sentMsg.deciders of its messages)
	fromLedger bool              // a ledger message started it (else the agent did, e.g. after a background task)
	scheduled  string            // the schedule whose firing it handles, for its cards ("" if none)
	payer      string            // user id of the first of them: the turn's cost counts for them (limits)
	replyTo    string            // Inbound.MsgID of the latest message the turn handles (Message.ReplyTo)
	replyUser  string            // author of that message
	segs       []render.Segment
	streaming  bool                          // the last segment is text receiving deltas
	tools      map[string]streamjson.ToolUse // tool calls of the turn by id
	toolSeg    map[string]int                // tool id → index of its line in segs
	live       liveMsg
	progress   bridges.MessageRef // the turn's progress line (stream.go); ID "" = none yet

	// Bounds (see turn.go).
	size        int      // bytes of segs' text, an upper bound
	toolOrder   []string // ids in tools, oldest first
	trimmedSegs int      // segments dropped to stay within maxTurnActivity
	forgotTools int      // tool calls forgotten beyond maxTurnTools
}

func newTurn(now time.Time) *turn {
	return &turn{
		start:      now,
		requesters: make(map[string]author),
		tools:      make(map[string]streamjson.ToolUse),
		toolSeg:    make(map[string]int),
	}
}

// addDelta appends streamed assistant text.
func (t *turn) addDelta(s string) {
	defer t.grew(len(s))
	if t.streaming && len(t.segs) > 0 {
		t.segs[len(t.segs)-1].Text += s
		return
	}
	t.segs = append(t.segs, render.Segment{Kind: render.SegText, Text: s})
	t.streaming = true
}

// grew accounts n more bytes of activity and applies the size bound.
func (t *turn) grew(n int) {
	t.size += n
	t.trimActivity()
}

// addText records a complete assistant text block. If the block was
// streamed, its deltas already hold the text and the block just ends.
func (t *turn) addText(s string) {
	if t.streaming {
		t.streaming = false
		return
	}
	if strings.TrimSpace(s) != "" {
		t.segs = append(t.segs, render.Segment{Kind: render.SegText, Text: s})
		t.grew(len(s))
	}
}

// addTool records a tool call and, if line is not empty, its compact line.
func (t *turn) addTool(u streamjson.ToolUse, line string) {
	t.streaming = false
	t.rememberTool(u.ID)
	t.tools[u.ID] = u
	if line == "" {
		return
	}
	t.toolSeg[u.ID] = len(t.segs)
	t.segs = append(t.segs, render.Segment{Kind: render.SegTool, Text: line, ToolID: u.ID})
	t.grew(len(line))
}

// addToolResult appends an abbreviated result under the tool's line.
func (t *turn) addToolResult(r streamjson.ToolResult) {
	i, ok := t.toolSeg[r.ToolUseID]
	if !ok {
		return
	}
	line := "\n" + render.ResultLine(r)
	t.segs[i].Text += line
	t.grew(len(line))
}

// addNote appends a line such as a refused tool call.
func (t *turn) addNote(line string) {
	t.streaming = false
	t.segs = append(t.segs, render.Segment{Kind: render.SegTool, Text: line})
	t.grew(len(line))
}

// final splits the turn into the activity to keep in the live message and
// the answer: the result text, or else the last text block.
func (t *turn) final(resultText string) (activity []render.Segment, answer string) {
	activity = t.segs
	answer = resultText
	if n := len(t.segs); n > 0 && t.segs[n-1].Kind == render.SegText {
		activity = t.segs[:n-1]
		if strings.TrimSpace(answer) == "" {
			answer = t.segs[n-1].Text
		}
	}
	return activity, strings.TrimSpace(answer)
}

// liveMsg is the message a turn streams into.
type liveMsg struct {
	ref    bridges.MessageRef
	posted bool
	shown  string     // text the platform currently shows
	dirty  bool       // the turn has content not shown yet
	stream liveStream // the native stream, on a Streamer (stream.go)
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
	t.live.dirty = true
	if cv.hasTimer(timerLive, "") {
		return
	}
	if !t.live.posted {
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
	if t == nil || !t.live.dirty {
		return
	}
	if wait := cv.budget.Take(cv.core.clock.Now(), cv.limits.EditInterval, false); wait > 0 {
		cv.after(wait, timerLive, "")
		return
	}
	t.live.dirty = false
	if cv.streamLive(ctx) {
		return
	}
	text := render.Tail(render.Join(t.segs)+" …", cv.maxRunes())
	if text == t.live.shown {
		return
	}
	if !t.live.posted {
		ref, err := cv.post(ctx, bridges.Message{Text: text, ReplyTo: t.replyTo})
		if err != nil {
			cv.log.Warn("post live message", "err", err)
			return
		}
		t.live.ref, t.live.posted = ref, true
	} else {
		// Past Limits.EditMaxAge the turn continues in a new message.
		ref, err := cv.editOrPost(ctx, t.live.ref, bridges.Message{Text: text}, bridges.Message{Text: text})
		if err != nil {
			cv.log.Warn("edit live message", "err", err)
			return
		}
		t.live.ref = ref
	}
	t.live.shown = text
}

// finishLive gives the live message its final text (urgent: it goes ahead of
// other streaming edits in the channel).
func (cv *conversation) finishLive(ctx context.Context, text string) {
	t := cv.turn
	cv.cancelTimer(timerLive, "")
	if t == nil || !t.live.posted || text == "" || text == t.live.shown {
		return
	}
	cv.budget.Take(cv.core.clock.Now(), cv.limits.EditInterval, true)
	ref, err := cv.editOrPost(ctx, t.live.ref, bridges.Message{Text: text}, bridges.Message{Text: text})
	if err != nil {
		cv.log.Warn("finish live message", "err", err)
		return
	}
	t.live.ref, t.live.shown = ref, text
}

// notice posts a short message from the bridge itself (not via the outbox:
// notices are informational and not retried).
func (cv *conversation) notice(ctx context.Context, text string) {
	if err := cv.postNotice(ctx, text); err != nil {
		cv.log.Warn("post notice", "err", err, "notice", render.Truncate(text, 80))
	}
}

// postNotice is notice that returns the error instead of logging it.
func (cv *conversation) postNotice(ctx context.Context, text string) error {
	cv.budget.Take(cv.core.clock.Now(), cv.limits.EditInterval, true)
	_, err := cv.platform.Post(ctx, cv.key, bridges.Message{Text: text})
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
//   - conversation.inflight (until the CLI's completed/cancelled receipt or
//     the process exit), cards (until decided or expired), timers (one per
//     kind and card), editReply (until the reply is posted), spared (until
//     the message is final).
//   - A session's agent events: bounded by the agent package's event queue
//     (streamjson.EventsDropped, counted in agentbridge_agent_events_dropped_total).
const (
	// maxRefusals bounds Core.refused, the memory of who was told that they
	// may not talk to a bot. When full, entries older than refusalEvery are
	// forgotten; if that is not enough, the oldest tenth (who may then be
	// told once more).
	maxRefusals = 10_000
	// maxTurnTools bounds the tool calls a turn remembers (to find the plan
	// of an ExitPlanMode request); beyond it the older ones are forgotten.
	maxTurnTools = 256
	// maxTurnActivity bounds the bytes of a turn's activity (its text and
	// tool lines) kept for the live message. The live message only ever
	// shows the last message's worth of it, so a long turn forgets its
	// oldest lines, down to half of this.
	maxTurnActivity = 256 << 10
)

// Names of bounded state in agentbridge_memory_evictions_total.
const (
	evictRefusals     = "refusals"
	evictTurnTools    = "turn_tools"
	evictTurnActivity = "turn_activity"
)

// makeRoomForRefusalLocked makes room in c.refused for one more entry when
// it is full (see maxRefusals); c.mu is held.
func (c *Core) makeRoomForRefusalLocked(now time.Time) {
	if len(c.refused) < maxRefusals {
		return
	}
	maps.DeleteFunc(c.refused, func(_ refusalKey, at time.Time) bool { return now.Sub(at) >= refusalEvery })
	if len(c.refused) < maxRefusals {
		return
	}
	n := evictOldest(c.refused, maxRefusals/10)
	c.opts.Metrics.Evicted(evictRefusals, n)
	c.log.Warn("many refused users within the hour: forgetting the oldest refusals, who may be told again",
		"forgotten", n, "limit", maxRefusals)
}

// evictOldest deletes the n entries of m with the oldest times and returns
// how many it deleted.
func evictOldest[K comparable](m map[K]time.Time, n int) int {
	keys := slices.SortedFunc(maps.Keys(m), func(a, b K) int { return m[a].Compare(m[b]) })
	n = min(n, len(keys))
	for _, k := range keys[:n] {
		delete(m, k)
	}
	return n
}

// trimActivity keeps the turn's activity within maxTurnActivity: when it is
// over, the oldest segments go until half of it is left (the last segment
// always stays). size is an upper bound kept by the add methods (a card
// may reset segs under it), recomputed before anything is dropped.
func (t *turn) trimActivity() {
	if t.size <= maxTurnActivity {
		return
	}
	t.size = 0
	for _, s := range t.segs {
		t.size += len(s.Text)
	}
	if t.size <= maxTurnActivity {
		return
	}
	k := 0
	for k < len(t.segs)-1 && t.size > maxTurnActivity/2 {
		t.size -= len(t.segs[k].Text)
		k++
	}
	t.segs = slices.Clone(t.segs[k:]) // release the dropped text
	for id, i := range t.toolSeg {
		if i < k {
			delete(t.toolSeg, id)
		} else {
			t.toolSeg[id] = i - k
		}
	}
	t.trimmedSegs += k
}

// rememberTool records the order of tool call id, forgetting the oldest
// ones beyond maxTurnTools.
func (t *turn) rememberTool(id string) {
	if _, ok := t.tools[id]; ok {
		return
	}
	t.toolOrder = append(t.toolOrder, id)
	if over := len(t.toolOrder) - maxTurnTools; over > 0 {
		for _, old := range t.toolOrder[:over] {
			delete(t.tools, old)
		}
		t.toolOrder = slices.Clone(t.toolOrder[over:])
		t.forgotTools += over
	}
}

// reportBounds logs and counts what the ending turn forgot to stay within
// its bounds.
func (cv *conversation) reportBounds(t *turn) {
	if t.trimmedSegs == 0 && t.forgotTools == 0 {
		return
	}
	cv.core.opts.Metrics.Evicted(evictTurnActivity, t.trimmedSegs)
	cv.core.opts.Metrics.Evicted(evictTurnTools, t.forgotTools)
	cv.log.Info("long turn: its oldest activity was dropped from memory",
		"segments", t.trimmedSegs, "tool_calls", t.forgotTools, "max_bytes", maxTurnActivity, "max_tools", maxTurnTools)
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
