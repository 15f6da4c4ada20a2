package core

import (
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/render"
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

	// Bounds (see bounds.go).
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
