package render

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
)

// SegKind is the kind of one piece of a turn's visible activity.
type SegKind int

const (
	SegText SegKind = iota // assistant text
	SegTool                // a compact tool line (already markdown)
)

// Segment is one piece of a turn's visible activity.
type Segment struct {
	Kind   SegKind
	Text   string
	ToolID string // the tool call of a SegTool line ("" for a note)
}

// Join joins segments into markdown: text blocks as paragraphs, tool
// lines one per line.
func Join(segs []Segment) string {
	var b strings.Builder
	for i, s := range segs {
		if i > 0 {
			if s.Kind == SegTool && segs[i-1].Kind == SegTool {
				b.WriteString("\n")
			} else {
				b.WriteString("\n\n")
			}
		}
		b.WriteString(strings.TrimSpace(s.Text))
	}
	return b.String()
}

// HasText reports whether segs hold assistant text (not only tool lines).
func HasText(segs []Segment) bool {
	for _, s := range segs {
		if s.Kind == SegText && strings.TrimSpace(s.Text) != "" {
			return true
		}
	}
	return false
}

// LastToolLine is the first line of the latest tool line of segs, without
// its "› " marker; "" if there is none.
func LastToolLine(segs []Segment) string {
	for i := len(segs) - 1; i >= 0; i-- {
		if segs[i].Kind == SegTool {
			first, _, _ := strings.Cut(strings.TrimSpace(segs[i].Text), "\n")
			return strings.TrimPrefix(first, "› ")
		}
	}
	return ""
}

// Cursor is how far a native stream has shown a turn's segments. Segment
// positions are absolute (they count the segments a bounded turn dropped),
// so dropping old segments does not confuse them.
type Cursor struct {
	Seg   int  // absolute index of the first segment not fully shown
	Bytes int  // bytes of that segment's text shown (text segments)
	Runes int  // runes of text shown in all
	Full  bool // text reached the limit: no more is shown
	Fence bool // a ``` code block is open in the text shown
}

// Closing returns the text that closes an open code block, if any.
func (c Cursor) Closing() []bridges.StreamChunk {
	if !c.Fence {
		return nil
	}
	return []bridges.StreamChunk{{Text: "\n```\n"}}
}

// chunks returns what a stream at s.Cur does not show yet: the pending
// task updates, then segs from the cursor on (segs[0] has the absolute
// index trimmed; text segments as text, tool lines as running tasks, notes
// as failed ones), and the cursor once they are shown. Text stops at
// maxRunes runes (Cursor.Full). While growing, the last segment is text
// still receiving deltas: the cursor stays on it. A plan changed since the
// last chunks comes first, tool lines skip() names are left out (shown as the plan), and a
// tool line's task takes the state s knows for it (ended before it was
// shown, or waiting for a card).
func (s *StreamShown) chunks(segs []Segment, trimmed int, growing bool, maxRunes int, skip func(toolID string) bool) ([]bridges.StreamChunk, Cursor) {
	cur, pending := s.Cur, s.pending
	var chunks []bridges.StreamChunk
	if s.Plan != nil {
		chunks = append(chunks, bridges.StreamChunk{Plan: s.Plan})
	}
	for _, u := range pending {
		chunks = append(chunks, bridges.StreamChunk{Task: &u})
	}
	if rel := cur.Seg - trimmed; rel < 0 { // trimmed before it was shown
		cur.Seg, cur.Bytes = trimmed, 0
	}
	for i := cur.Seg - trimmed; i < len(segs); i++ {
		seg := segs[i]
		last := i == len(segs)-1
		switch seg.Kind {
		case SegText:
			text := seg.Text[cur.Bytes:]
			if cur.Bytes == 0 && cur.Runes > 0 {
				text = "\n\n" + strings.TrimLeft(text, "\n")
			}
			if n := utf8.RuneCountInString(text); !cur.Full && cur.Runes+n > maxRunes {
				cur.Full = true
			}
			if !cur.Full && text != "" {
				chunks = append(chunks, bridges.StreamChunk{Text: text})
				cur.Runes += utf8.RuneCountInString(text)
				cur.Fence = cur.Fence != (strings.Count(text, "```")%2 == 1)
			}
			if last && growing { // the segment grows on
				cur.Bytes = len(seg.Text)
				return chunks, cur
			}
		case SegTool:
			if skip != nil && seg.ToolID != "" && skip(seg.ToolID) {
				break // shown as the plan
			}
			id := seg.ToolID
			if id == "" {
				id = "note-" + strconv.Itoa(cur.Seg)
			}
			task := bridges.StreamTask{ID: id, Title: ToolTitle(seg.Text), Status: bridges.TaskRunning}
			if seg.ToolID == "" {
				task.Status = bridges.TaskFailed // a refused call
			} else if d, ok := s.done[id]; ok {
				task.Status, task.Output = d.Status, d.Output // it ended before it was shown
			} else if s.Waiting[id] {
				task.Status = bridges.TaskPending // its card waits for a person
			}
			chunks = append(chunks, bridges.StreamChunk{Task: &task})
		}
		cur.Seg, cur.Bytes = cur.Seg+1, 0
	}
	return chunks, cur
}

// StreamShown is what a native stream shows of a turn: how far its text
// and tool lines went (Cur), the task updates not sent yet, and the tasks
// shown with their titles.
type StreamShown struct {
	Cur      Cursor
	pending  []bridges.StreamTask          // task updates not sent yet
	sentTask map[string]string             // tool ids shown as tasks → their titles
	done     map[string]bridges.StreamTask // results of tools not shown yet: their final state
	// Waiting holds the tool ids whose card waits for a person: their
	// tasks show pending (SetWaiting, Decided).
	Waiting map[string]bool
	// Plan is the conversation's plan, changed and not shown yet; the next
	// chunks carry it first.
	Plan *bridges.StreamPlan
}

// ToolDone notes a tool's result: the tool's task becomes complete (or
// failed), with the result's first line as its output when full. It
// reports whether there is something new to show (false when the tool
// was not shown as a task).
func (s *StreamShown) ToolDone(r streamjson.ToolResult, full bool) bool {
	title, shown := s.sentTask[r.ToolUseID]
	st := bridges.StreamTask{ID: r.ToolUseID, Title: title, Status: bridges.TaskComplete}
	if r.IsError {
		st.Status = bridges.TaskFailed
	}
	if full {
		st.Output = strings.TrimSpace(ResultLine(r))
	}
	if !shown { // shown later, already in its final state
		if s.done == nil {
			s.done = make(map[string]bridges.StreamTask)
		}
		s.done[r.ToolUseID] = st
		return false
	}
	s.pending = append(s.pending, st)
	return true
}

// Chunks returns what the stream does not show yet of segs (see chunks),
// and the cursor once it is shown.
// skip, when set, names tool calls left out of the stream (shown as the
// plan instead).
func (s *StreamShown) Chunks(segs []Segment, trimmed int, growing bool, maxRunes int, skip func(toolID string) bool) ([]bridges.StreamChunk, Cursor) {
	return s.chunks(segs, trimmed, growing, maxRunes, skip)
}

// SetWaiting notes that tool call id waits for a person's decision on its
// card, and, while the stream is open, queues its pending state when its
// task is shown already. It reports whether there is something new to show.
func (s *StreamShown) SetWaiting(id string, open bool) bool {
	if id == "" {
		return false
	}
	if s.Waiting == nil {
		s.Waiting = make(map[string]bool)
	}
	s.Waiting[id] = true
	return open && s.TaskUpdate(id, bridges.TaskPending)
}

// Decided notes that the card of tool call id was decided: an allowed
// call's task shows in progress again (a refused one becomes failed with
// its result, ToolDone); the update is queued only while the stream is
// open. It reports whether there is something new to show.
func (s *StreamShown) Decided(id string, allowed, open bool) bool {
	if !s.Waiting[id] {
		return false
	}
	delete(s.Waiting, id)
	return allowed && open && s.TaskUpdate(id, bridges.TaskRunning)
}

// TaskUpdate queues a new state of an already shown task; a task not shown
// yet gets its state from Chunks when it is. It reports whether it queued.
func (s *StreamShown) TaskUpdate(id, status string) bool {
	title, shown := s.sentTask[id]
	if !shown {
		return false
	}
	s.pending = append(s.pending, bridges.StreamTask{ID: id, Title: title, Status: status})
	return true
}

// Committed marks chunks from Chunks as shown.
func (s *StreamShown) Committed(cur Cursor, chunks []bridges.StreamChunk) {
	s.Cur = cur
	s.pending = nil
	s.Plan = nil
	for _, c := range chunks {
		if c.Task != nil && (c.Task.Status == bridges.TaskRunning || c.Task.Status == bridges.TaskPending) {
			if s.sentTask == nil {
				s.sentTask = make(map[string]string)
			}
			s.sentTask[c.Task.ID] = c.Task.Title
		}
	}
}
