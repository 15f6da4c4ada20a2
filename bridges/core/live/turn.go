// Package live is what a running turn shows while it runs: its activity
// (streamed text, one line per tool call, notes), bounded in memory, its
// tool calls, the state of its live message and of its native stream
// (bridges.Streamer), and at its end the split into activity and answer
// and how the stream ends. It is pure state, owned by the conversation's
// worker (bridges/core), which does the posting and editing; it never
// imports the core and starts no goroutine.
package live

import (
	"slices"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/render"
)

// Bounds of a turn's memory; what they make a turn forget is counted in
// TrimmedSegs and ForgotTools (the core logs it and counts it in
// agentbridge_memory_evictions_total).
const (
	// MaxTools bounds the tool calls a turn remembers (to find the plan
	// of an ExitPlanMode request); beyond it the older ones are forgotten.
	MaxTools = 256
	// MaxActivity bounds the bytes of a turn's activity (its text and
	// tool lines) kept for the live message. The live message only ever
	// shows the last message's worth of it, so a long turn forgets its
	// oldest lines, down to half of this.
	MaxActivity = 256 << 10
)

// Turn is what a running turn has shown and will show. It is owned by the
// conversation's worker: not safe for concurrent use.
type Turn struct {
	Start     time.Time          // when the turn began (the first live post waits an edit interval from it)
	ReplyTo   string             // Inbound.MsgID of the latest message the turn handles (Message.ReplyTo)
	ReplyUser string             // author of that message
	Progress  bridges.MessageRef // the turn's progress line; ID "" = none yet
	Segs      []render.Segment
	Streaming bool                          // the last segment is text receiving deltas
	Tools     map[string]streamjson.ToolUse // tool calls of the turn by id
	ToolSeg   map[string]int                // tool id → index of its line in Segs
	Live      Msg

	// Bounds (MaxActivity, MaxTools).
	size        int      // bytes of Segs' text, an upper bound
	toolOrder   []string // ids in Tools, oldest first
	TrimmedSegs int      // segments dropped to stay within MaxActivity
	ForgotTools int      // tool calls forgotten beyond MaxTools
}

// NewTurn is a turn begun at start that has shown nothing yet.
func NewTurn(start time.Time) *Turn {
	return &Turn{
		Start:   start,
		Tools:   make(map[string]streamjson.ToolUse),
		ToolSeg: make(map[string]int),
	}
}

// AddDelta appends streamed assistant text.
func (t *Turn) AddDelta(s string) {
	defer t.grew(len(s))
	if t.Streaming && len(t.Segs) > 0 {
		t.Segs[len(t.Segs)-1].Text += s
		return
	}
	t.Segs = append(t.Segs, render.Segment{Kind: render.SegText, Text: s})
	t.Streaming = true
}

// grew accounts n more bytes of activity and applies the size bound.
func (t *Turn) grew(n int) {
	t.size += n
	t.trimActivity()
}

// AddText records a complete assistant text block. If the block was
// streamed, its deltas already hold the text and the block just ends.
func (t *Turn) AddText(s string) {
	if t.Streaming {
		t.Streaming = false
		return
	}
	if strings.TrimSpace(s) != "" {
		t.Segs = append(t.Segs, render.Segment{Kind: render.SegText, Text: s})
		t.grew(len(s))
	}
}

// AddTool records a tool call and, if line is not empty, its compact line.
func (t *Turn) AddTool(u streamjson.ToolUse, line string) {
	t.Streaming = false
	t.rememberTool(u.ID)
	t.Tools[u.ID] = u
	if line == "" {
		return
	}
	t.ToolSeg[u.ID] = len(t.Segs)
	t.Segs = append(t.Segs, render.Segment{Kind: render.SegTool, Text: line, ToolID: u.ID})
	t.grew(len(line))
}

// AddToolResult appends an abbreviated result under the tool's line.
func (t *Turn) AddToolResult(r streamjson.ToolResult) {
	i, ok := t.ToolSeg[r.ToolUseID]
	if !ok {
		return
	}
	line := "\n" + render.ResultLine(r)
	t.Segs[i].Text += line
	t.grew(len(line))
}

// AddNote appends a line such as a refused tool call.
func (t *Turn) AddNote(line string) {
	t.Streaming = false
	t.Segs = append(t.Segs, render.Segment{Kind: render.SegTool, Text: line})
	t.grew(len(line))
}

// Final splits the turn into the activity to keep in the live message and
// the answer: the result text, or else the last text block.
func (t *Turn) Final(resultText string) (activity []render.Segment, answer string) {
	activity = t.Segs
	answer = resultText
	if n := len(t.Segs); n > 0 && t.Segs[n-1].Kind == render.SegText {
		activity = t.Segs[:n-1]
		if strings.TrimSpace(answer) == "" {
			answer = t.Segs[n-1].Text
		}
	}
	return activity, strings.TrimSpace(answer)
}

// Msg is the message a turn streams into.
type Msg struct {
	Ref    bridges.MessageRef
	Posted bool
	Shown  string // text the platform currently shows
	Dirty  bool   // the turn has content not shown yet
	// Unsure: a keyed create of this message failed without an answer that
	// says it was refused (a lost response, an outage): the platform may
	// show it. The turn's end tries the key once more (the core's
	// recoverLive) before its answer is posted beside it.
	Unsure bool
	Stream Stream // the native stream, on a Streamer (stream.go)
}

// trimActivity keeps the turn's activity within MaxActivity: when it is
// over, the oldest segments go until half of it is left (the last segment
// always stays). size is an upper bound kept by the add methods (a card
// may reset Segs under it), recomputed before anything is dropped.
func (t *Turn) trimActivity() {
	if t.size <= MaxActivity {
		return
	}
	t.size = 0
	for _, s := range t.Segs {
		t.size += len(s.Text)
	}
	if t.size <= MaxActivity {
		return
	}
	k := 0
	for k < len(t.Segs)-1 && t.size > MaxActivity/2 {
		t.size -= len(t.Segs[k].Text)
		k++
	}
	t.Segs = slices.Clone(t.Segs[k:]) // release the dropped text
	for id, i := range t.ToolSeg {
		if i < k {
			delete(t.ToolSeg, id)
		} else {
			t.ToolSeg[id] = i - k
		}
	}
	t.TrimmedSegs += k
}

// rememberTool records the order of tool call id, forgetting the oldest
// ones beyond MaxTools.
func (t *Turn) rememberTool(id string) {
	if _, ok := t.Tools[id]; ok {
		return
	}
	t.toolOrder = append(t.toolOrder, id)
	if over := len(t.toolOrder) - MaxTools; over > 0 {
		for _, old := range t.toolOrder[:over] {
			delete(t.Tools, old)
		}
		t.toolOrder = slices.Clone(t.toolOrder[over:])
		t.ForgotTools += over
	}
}
