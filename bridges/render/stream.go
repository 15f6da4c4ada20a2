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

// StreamChunks returns what a stream at cur does not show yet: the pending
// task updates, then segs from cur on (segs[0] has the absolute index
// trimmed; text segments as text, tool lines as running tasks, notes as
// failed ones), and the cursor once they are shown. Text stops at
// maxRunes runes (Cursor.Full). While growing, the last segment is text
// still receiving deltas: the cursor stays on it.
func StreamChunks(segs []Segment, trimmed int, growing bool, pending []bridges.StreamTask, cur Cursor, maxRunes int) ([]bridges.StreamChunk, Cursor) {
	var chunks []bridges.StreamChunk
	for _, u := range pending {
		chunks = append(chunks, bridges.StreamChunk{Task: &u})
	}
	if rel := cur.Seg - trimmed; rel < 0 { // trimmed before it was shown
		cur.Seg, cur.Bytes = trimmed, 0
	}
	for i := cur.Seg - trimmed; i < len(segs); i++ {
		s := segs[i]
		last := i == len(segs)-1
		switch s.Kind {
		case SegText:
			text := s.Text[cur.Bytes:]
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
				cur.Bytes = len(s.Text)
				return chunks, cur
			}
		case SegTool:
			id := s.ToolID
			if id == "" {
				id = "note-" + strconv.Itoa(cur.Seg)
			}
			task := bridges.StreamTask{ID: id, Title: ToolTitle(s.Text), Status: bridges.TaskRunning}
			if s.ToolID == "" {
				task.Status = bridges.TaskFailed // a refused call
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
	pending  []bridges.StreamTask // task updates not sent yet
	sentTask map[string]string    // tool ids shown as tasks → their titles
}

// ToolDone notes a tool's result: the tool's task becomes complete (or
// failed), with the result's first line as its output when full. It
// reports whether there is something new to show (false when the tool
// was not shown as a task).
func (s *StreamShown) ToolDone(r streamjson.ToolResult, full bool) bool {
	title, shown := s.sentTask[r.ToolUseID]
	if !shown {
		return false
	}
	st := bridges.StreamTask{ID: r.ToolUseID, Title: title, Status: bridges.TaskComplete}
	if r.IsError {
		st.Status = bridges.TaskFailed
	}
	if full {
		st.Output = strings.TrimSpace(ResultLine(r))
	}
	s.pending = append(s.pending, st)
	return true
}

// Chunks returns what the stream does not show yet of segs (see
// StreamChunks), and the cursor once it is shown.
func (s *StreamShown) Chunks(segs []Segment, trimmed int, growing bool, maxRunes int) ([]bridges.StreamChunk, Cursor) {
	return StreamChunks(segs, trimmed, growing, s.pending, s.Cur, maxRunes)
}

// Committed marks chunks from Chunks as shown.
func (s *StreamShown) Committed(cur Cursor, chunks []bridges.StreamChunk) {
	s.Cur = cur
	s.pending = nil
	for _, c := range chunks {
		if c.Task != nil && c.Task.Status == bridges.TaskRunning {
			if s.sentTask == nil {
				s.sentTask = make(map[string]string)
			}
			s.sentTask[c.Task.ID] = c.Task.Title
		}
	}
}
