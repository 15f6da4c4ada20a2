package live

import (
	"context"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/render"
)

// Stream is a turn's native stream (Streamer) and what of the turn's
// segments it shows so far (render.StreamShown). Segment positions are
// absolute (they count the segments trimActivity dropped), so trimming
// does not confuse them.
type Stream struct {
	S       bridges.Stream
	Refused bool // the platform refused to stream this turn: post and edit
	Broken  bool // an Append failed: nothing more is appended
	render.StreamShown
}

// ToolDone notes a tool's result for the stream (StreamShown.ToolDone),
// also before the stream opens: a tool that ended before its task was
// shown is then shown in its final state. It reports whether the open
// stream has something new to show.
func (l *Msg) ToolDone(r streamjson.ToolResult, full bool) bool {
	if !l.Stream.StreamShown.ToolDone(r, full) || l.Stream.S == nil {
		return false
	}
	l.Dirty = true
	return true
}

// ToolWaiting notes that the tool call id waits for a person's decision
// on its card: its task shows pending. It reports whether the stream has
// something new to show.
func (l *Msg) ToolWaiting(id string) bool {
	if !l.Stream.SetWaiting(id, l.Stream.S != nil) {
		return false
	}
	l.Dirty = true
	return true
}

// ToolDecided notes that the card of tool call id was decided: an
// allowed call's task shows in progress again (a refused one becomes
// failed with its result, ToolDone). It reports whether the stream has
// something new to show.
func (l *Msg) ToolDecided(id string, allowed bool) bool {
	if !l.Stream.Decided(id, allowed, l.Stream.S != nil) {
		return false
	}
	l.Dirty = true
	return true
}

// StreamChunks returns what the stream does not show yet of t, and the
// cursor once it is shown.
func (t *Turn) StreamChunks(maxRunes int) ([]bridges.StreamChunk, render.Cursor) {
	return t.Live.Stream.Chunks(t.Segs, t.TrimmedSegs, t.Streaming, maxRunes, func(id string) bool {
		return render.IsPlanTool(t.Tools[id].Name) // shown as the plan (core's stream.go)
	})
}

// Committed marks chunks from StreamChunks as shown.
func (t *Turn) Committed(cur render.Cursor, chunks []bridges.StreamChunk) {
	t.Live.Stream.Committed(cur, chunks)
}

// EndStream decides, when the turn's result arrives, how its open stream
// ends. If the stream shows the turn's answer so far (the answer is the
// last text it streamed) and the rest fits, it returns the chunks that
// complete it (the rest and suffix, e.g. the footer) and true: the reply
// is the stream's Stop, and t.Live.Stream.S is left for the caller to hand
// to the reply. Otherwise it stops the stream with the rest of the
// activity (not the answer) and returns false: the answer is posted.
// Either way the turn no longer owns the stream.
func (t *Turn) EndStream(ctx context.Context, log *slog.Logger, maxRunes int, answer, suffix string) ([]bridges.StreamChunk, bool) {
	ls := &t.Live.Stream
	s := ls.S
	ls.S = nil
	n := len(t.Segs)
	answerStreamed := n > 0 && t.Segs[n-1].Kind == render.SegText && strings.TrimSpace(t.Segs[n-1].Text) == answer
	if !ls.Broken && answerStreamed {
		t.Streaming = false
		chunks, cur := t.StreamChunks(maxRunes)
		if !cur.Full && cur.Runes+utf8.RuneCountInString(suffix) <= maxRunes {
			if suffix != "" {
				chunks = append(chunks, bridges.StreamChunk{Text: suffix})
			}
			ls.S = s // handed to the reply by the caller
			return chunks, true
		}
	}
	rest := ls.Cur.Closing()
	if !ls.Broken {
		saved := t.Segs
		if answerStreamed {
			t.Segs = t.Segs[:n-1] // the activity only: the answer is posted
		}
		t.Streaming = false
		var cur render.Cursor
		rest, cur = t.StreamChunks(maxRunes)
		rest = append(rest, cur.Closing()...)
		t.Segs = saved
	}
	if err := s.Stop(ctx, rest); err != nil {
		log.Warn("stop stream", "err", err)
	}
	return nil, false
}

// StopStream ends the turn's open stream with last (e.g. a note that the
// turn was interrupted), if there is one.
func (t *Turn) StopStream(ctx context.Context, log *slog.Logger, maxRunes int, last string) {
	if t.Live.Stream.S == nil {
		return
	}
	s := t.Live.Stream.S
	t.Live.Stream.S = nil
	chunks := t.Live.Stream.Cur.Closing()
	if !t.Live.Stream.Broken {
		t.Streaming = false
		var cur render.Cursor
		chunks, cur = t.StreamChunks(maxRunes)
		chunks = append(chunks, cur.Closing()...)
		if last != "" {
			chunks = append(chunks, bridges.StreamChunk{Text: last})
		}
	}
	if err := s.Stop(ctx, chunks); err != nil {
		log.Warn("stop stream", "err", err)
	}
}
