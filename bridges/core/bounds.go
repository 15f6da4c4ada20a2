package core

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
)

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
