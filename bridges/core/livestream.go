package core

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
)

// liveStream is a turn's native stream (Streamer): what of the turn's
// segments it shows so far. Segment positions are absolute (they count
// the segments trimActivity dropped), so trimming does not confuse them.
type liveStream struct {
	s        bridges.Stream
	refused  bool // the platform refused to stream this turn: post and edit
	broken   bool // an Append failed: nothing more is appended
	cur      streamCursor
	pending  []bridges.StreamTask          // task updates not sent yet
	sentTask map[string]string             // tool ids shown as tasks → their titles
	waiting  map[string]bool               // tool ids whose card waits for a person (planfeedback.go)
	done     map[string]bridges.StreamTask // results of tools not shown yet: their final state
	plan     *bridges.StreamPlan           // the conversation's plan, changed and not shown yet
}

// streamCursor is how far the stream has shown the turn.
type streamCursor struct {
	seg   int  // absolute index of the first segment not fully shown
	bytes int  // bytes of that segment's text shown (text segments)
	runes int  // runes of text shown in all
	full  bool // text reached the limit: no more is shown
	fence bool // a ``` code block is open in the text shown
}

// closing returns the text that closes an open code block, if any.
func (c streamCursor) closing() []bridges.StreamChunk {
	if !c.fence {
		return nil
	}
	return []bridges.StreamChunk{{Text: "\n```\n"}}
}

// toolDone notes a tool's result for the stream: the tool's task becomes
// complete (or failed), with the result's first line as its output when
// full. It reports whether the stream has something new to show.
func (l *liveMsg) toolDone(r streamjson.ToolResult, full bool) bool {
	ls := &l.stream
	title, shown := ls.sentTask[r.ToolUseID]
	st := bridges.StreamTask{ID: r.ToolUseID, Title: title, Status: bridges.TaskComplete}
	if r.IsError {
		st.Status = bridges.TaskFailed
	}
	if full {
		st.Output = strings.TrimSpace(resultLine(r))
	}
	if ls.s == nil || !shown { // shown later, already in its final state
		if ls.done == nil {
			ls.done = make(map[string]bridges.StreamTask)
		}
		ls.done[r.ToolUseID] = st
		return false
	}
	ls.pending = append(ls.pending, st)
	l.dirty = true
	return true
}

// streamChunks returns what the stream does not show yet of t, and the
// cursor once it is shown. Text stops at maxRunes runes (cur.full).
func (t *turn) streamChunks(maxRunes int) ([]bridges.StreamChunk, streamCursor) {
	ls := &t.live.stream
	cur := ls.cur
	var chunks []bridges.StreamChunk
	if ls.plan != nil {
		chunks = append(chunks, bridges.StreamChunk{Plan: ls.plan})
	}
	for _, u := range ls.pending {
		chunks = append(chunks, bridges.StreamChunk{Task: &u})
	}
	if rel := cur.seg - t.trimmedSegs; rel < 0 { // trimmed before it was shown
		cur.seg, cur.bytes = t.trimmedSegs, 0
	}
	for i := cur.seg - t.trimmedSegs; i < len(t.segs); i++ {
		s := t.segs[i]
		last := i == len(t.segs)-1
		switch s.kind {
		case segText:
			text := s.text[cur.bytes:]
			if cur.bytes == 0 && cur.runes > 0 {
				text = "\n\n" + strings.TrimLeft(text, "\n")
			}
			if n := utf8.RuneCountInString(text); !cur.full && cur.runes+n > maxRunes {
				cur.full = true
			}
			if !cur.full && text != "" {
				chunks = append(chunks, bridges.StreamChunk{Text: text})
				cur.runes += utf8.RuneCountInString(text)
				cur.fence = cur.fence != (strings.Count(text, "```")%2 == 1)
			}
			if last && t.streaming { // the segment grows on
				cur.bytes = len(s.text)
				return chunks, cur
			}
		case segTool:
			if isPlanTool(t.tools[s.toolID].Name) {
				break // shown as the plan (planfeedback.go)
			}
			id := s.toolID
			if id == "" {
				id = "note-" + strconv.Itoa(cur.seg)
			}
			task := bridges.StreamTask{ID: id, Title: toolTitle(s.text), Status: bridges.TaskRunning}
			if s.toolID == "" {
				task.Status = bridges.TaskFailed // a refused call
			} else if d, ok := ls.done[id]; ok {
				task.Status, task.Output = d.Status, d.Output // it ended before it was shown
			} else if ls.waiting[id] {
				task.Status = bridges.TaskPending // its card waits for a person
			}
			chunks = append(chunks, bridges.StreamChunk{Task: &task})
		}
		cur.seg, cur.bytes = cur.seg+1, 0
	}
	return chunks, cur
}

// committed marks chunks from streamChunks as shown.
func (t *turn) committed(cur streamCursor, chunks []bridges.StreamChunk) {
	ls := &t.live.stream
	ls.cur = cur
	ls.pending = nil
	ls.plan = nil
	for _, c := range chunks {
		if c.Task != nil && (c.Task.Status == bridges.TaskRunning || c.Task.Status == bridges.TaskPending) {
			if ls.sentTask == nil {
				ls.sentTask = make(map[string]string)
			}
			ls.sentTask[c.Task.ID] = c.Task.Title
		}
	}
}

// streamLive shows the turn's news through the platform's native stream,
// starting it if needed. It reports false when the turn is not streamed
// (no Streamer, refused, or a live message was already posted): the
// caller posts and edits instead.
func (cv *conversation) streamLive(ctx context.Context) bool {
	t := cv.turn
	ls := &t.live.stream
	if ls.s == nil {
		st, ok := cv.platform.(bridges.Streamer)
		if !ok || ls.refused || t.live.posted {
			return false
		}
		chunks, cur := t.streamChunks(cv.maxRunes())
		s, err := st.StartStream(ctx, cv.key, t.replyTo, t.replyUser, chunks)
		if err != nil {
			if !errors.Is(err, bridges.ErrStreamRefused) {
				cv.log.Warn("start stream; posting and editing instead", "err", err)
			}
			ls.refused = true
			return false
		}
		ls.s = s
		t.live.ref = s.Ref()
		t.live.ref.At = cv.core.clock.Now()
		t.committed(cur, chunks)
		return true
	}
	if ls.broken {
		return true
	}
	chunks, cur := t.streamChunks(cv.maxRunes())
	if len(chunks) == 0 {
		return true
	}
	if err := ls.s.Append(ctx, chunks); err != nil {
		cv.log.Warn("append to stream; the answer will be posted", "err", err)
		ls.broken = true
		return true
	}
	t.committed(cur, chunks)
	return true
}

// streamEnd is how a turn's stream ends when its reply (an outbox row) is
// posted: Stop with last instead of a post.
type streamEnd struct {
	s    bridges.Stream
	last []bridges.StreamChunk
}

// endStream decides, when the turn's result arrives, how its open stream
// ends. If the stream shows the turn's answer so far (the answer is the
// last text it streamed) and the rest fits, it returns the chunks that
// complete it (the rest and suffix, e.g. the footer) and true: the reply
// is the stream's Stop. Otherwise it stops the stream with the rest of the
// activity (not the answer) and returns false: the answer is posted.
// Either way the turn no longer owns the stream.
func (cv *conversation) endStream(ctx context.Context, answer, suffix string) ([]bridges.StreamChunk, bool) {
	t := cv.turn
	ls := &t.live.stream
	s := ls.s
	ls.s = nil
	n := len(t.segs)
	answerStreamed := n > 0 && t.segs[n-1].kind == segText && strings.TrimSpace(t.segs[n-1].text) == answer
	if !ls.broken && answerStreamed {
		t.streaming = false
		chunks, cur := t.streamChunks(cv.maxRunes())
		if !cur.full && cur.runes+utf8.RuneCountInString(suffix) <= cv.maxRunes() {
			if suffix != "" {
				chunks = append(chunks, bridges.StreamChunk{Text: suffix})
			}
			ls.s = s // handed to the reply by the caller
			return chunks, true
		}
	}
	rest := ls.cur.closing()
	if !ls.broken {
		saved := t.segs
		if answerStreamed {
			t.segs = t.segs[:n-1] // the activity only: the answer is posted
		}
		t.streaming = false
		var cur streamCursor
		rest, cur = t.streamChunks(cv.maxRunes())
		rest = append(rest, cur.closing()...)
		t.segs = saved
	}
	if err := s.Stop(ctx, rest); err != nil {
		cv.log.Warn("stop stream", "err", err)
	}
	return nil, false
}

// stopStream ends the turn's open stream with last (e.g. a note that the
// turn was interrupted), if there is one.
func (cv *conversation) stopStream(ctx context.Context, last string) {
	t := cv.turn
	if t == nil || t.live.stream.s == nil {
		return
	}
	s := t.live.stream.s
	t.live.stream.s = nil
	chunks := t.live.stream.cur.closing()
	if !t.live.stream.broken {
		t.streaming = false
		var cur streamCursor
		chunks, cur = t.streamChunks(cv.maxRunes())
		chunks = append(chunks, cur.closing()...)
		if last != "" {
			chunks = append(chunks, bridges.StreamChunk{Text: last})
		}
	}
	if err := s.Stop(ctx, chunks); err != nil {
		cv.log.Warn("stop stream", "err", err)
	}
}

// toolTitle is the plain text of a tool line ("› `Bash: ls`" → "Bash: ls";
// a result line under it is left out).
func toolTitle(line string) string {
	s, _, _ := strings.Cut(strings.TrimSpace(line), "\n")
	s = strings.TrimSpace(strings.TrimPrefix(s, "›"))
	if ticks := len(s) - len(strings.TrimLeft(s, "`")); ticks > 0 {
		s = strings.TrimSpace(strings.TrimSuffix(s[ticks:], strings.Repeat("`", ticks)))
	}
	return s
}
