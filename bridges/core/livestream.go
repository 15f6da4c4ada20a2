package core

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/render"
)

// liveStream is a turn's native stream (Streamer) and what of the turn's
// segments it shows so far (render.StreamShown). Segment positions are
// absolute (they count the segments trimActivity dropped), so trimming
// does not confuse them.
type liveStream struct {
	s       bridges.Stream
	refused bool // the platform refused to stream this turn: post and edit
	broken  bool // an Append failed: nothing more is appended
	render.StreamShown
}

// toolDone notes a tool's result for the stream (StreamShown.ToolDone).
// It reports whether the stream has something new to show.
func (l *liveMsg) toolDone(r streamjson.ToolResult, full bool) bool {
	if l.stream.s == nil || !l.stream.ToolDone(r, full) {
		return false
	}
	l.dirty = true
	return true
}

// streamChunks returns what the stream does not show yet of t, and the
// cursor once it is shown.
func (t *turn) streamChunks(maxRunes int) ([]bridges.StreamChunk, render.Cursor) {
	return t.live.stream.Chunks(t.segs, t.trimmedSegs, t.streaming, maxRunes)
}

// committed marks chunks from streamChunks as shown.
func (t *turn) committed(cur render.Cursor, chunks []bridges.StreamChunk) {
	t.live.stream.Committed(cur, chunks)
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
	answerStreamed := n > 0 && t.segs[n-1].Kind == render.SegText && strings.TrimSpace(t.segs[n-1].Text) == answer
	if !ls.broken && answerStreamed {
		t.streaming = false
		chunks, cur := t.streamChunks(cv.maxRunes())
		if !cur.Full && cur.Runes+utf8.RuneCountInString(suffix) <= cv.maxRunes() {
			if suffix != "" {
				chunks = append(chunks, bridges.StreamChunk{Text: suffix})
			}
			ls.s = s // handed to the reply by the caller
			return chunks, true
		}
	}
	rest := ls.Cur.Closing()
	if !ls.broken {
		saved := t.segs
		if answerStreamed {
			t.segs = t.segs[:n-1] // the activity only: the answer is posted
		}
		t.streaming = false
		var cur render.Cursor
		rest, cur = t.streamChunks(cv.maxRunes())
		rest = append(rest, cur.Closing()...)
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
	chunks := t.live.stream.Cur.Closing()
	if !t.live.stream.broken {
		t.streaming = false
		var cur render.Cursor
		chunks, cur = t.streamChunks(cv.maxRunes())
		chunks = append(chunks, cur.Closing()...)
		if last != "" {
			chunks = append(chunks, bridges.StreamChunk{Text: last})
		}
	}
	if err := s.Stop(ctx, chunks); err != nil {
		cv.log.Warn("stop stream", "err", err)
	}
}
