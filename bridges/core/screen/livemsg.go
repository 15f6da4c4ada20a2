package screen

import (
	"context"
	"errors"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/live"
	"github.com/agentbridge/agentbridge/bridges/core/render"
)

// FirstWait is how long a turn's first live post still waits: one edit
// interval from the turn's start, so that a fast answer needs a single
// post. Zero once the live message exists or the interval has passed.
func (s *Screen) FirstWait(t *live.Turn) (wait time.Duration) {
	if t.Live.Posted {
		return 0
	}
	return max(0, t.Start.Add(s.limits.EditInterval).Sub(s.now()))
}

// Flush shows what turn t has not shown yet, in its native stream or its
// live message (posted or edited), if the channel's budget allows now;
// else it returns how long to wait before calling it again.
func (s *Screen) Flush(ctx context.Context, t *live.Turn) (wait time.Duration) {
	if !t.Live.Dirty {
		return 0
	}
	if wait := s.Take(false); wait > 0 {
		return wait
	}
	t.Live.Dirty = false
	if s.stream(ctx, t) {
		return 0
	}
	text := render.Tail(render.Join(t.Segs)+" …", s.MaxRunes())
	if text == t.Live.Shown {
		return 0
	}
	if !t.Live.Posted {
		if !s.postLive(ctx, t, text) {
			return 0
		}
	} else {
		// Past Limits.EditMaxAge the turn continues in a new message.
		ref, err := s.EditOrPost(ctx, t.Live.Ref, bridges.Message{Text: text}, bridges.Message{Text: text})
		if err != nil {
			s.log.Warn("edit live message", "err", err)
			return 0
		}
		if ref.ID != t.Live.Ref.ID && s.keysLive() {
			s.recordStream(ctx, ref)
		}
		t.Live.Ref = ref
	}
	t.Live.Shown = text
	return 0
}

// postLive creates the turn's live message showing text, under the turn's
// key where the platform keys live messages (openstream.go). It reports
// whether the message exists now.
func (s *Screen) postLive(ctx context.Context, t *live.Turn, text string) bool {
	m := bridges.Message{Text: text, ReplyTo: t.ReplyTo}
	keyed := s.keysLive() && t.ReplyTo != ""
	if keyed {
		m.Idem, m.Live = "live:"+s.id+":"+t.ReplyTo, true // the turn's key
	}
	ref, err := s.Post(ctx, m)
	if err != nil {
		s.log.Warn("post live message", "err", err)
		t.Live.Unsure = keyed && !bridges.IsPermanent(err)
		return false
	}
	t.Live.Ref, t.Live.Posted, t.Live.Unsure = ref, true, false
	if keyed {
		s.recordStream(ctx, ref)
	}
	return true
}

// RecoverLive is the turn's end after a keyed live create that may have
// reached the platform (live.Msg.Unsure): the key is tried once more, so
// that a message the platform stored is found (Discord returns it for its
// nonce) and becomes the answer, instead of staying half-written beside it.
func (s *Screen) RecoverLive(ctx context.Context, t *live.Turn) {
	if t.Live.Posted || !t.Live.Unsure || t.Live.Stream.S != nil || !s.w.MayPost() {
		return
	}
	t.Live.Unsure = false
	text := render.Tail(render.Join(t.Segs)+" …", s.MaxRunes())
	if s.postLive(ctx, t, text) {
		t.Live.Shown = text
		s.log.Info("live message found again by its key after a lost answer", "msg_id", t.Live.Ref.ID)
	}
}

// FinishLive gives the live message its final text (urgent: it goes ahead
// of other streaming edits in the channel).
func (s *Screen) FinishLive(ctx context.Context, t *live.Turn, text string) {
	if !t.Live.Posted || text == "" || text == t.Live.Shown {
		return
	}
	s.Take(true)
	ref, err := s.EditOrPost(ctx, t.Live.Ref, bridges.Message{Text: text}, bridges.Message{Text: text})
	if err != nil {
		s.log.Warn("finish live message", "err", err)
		return
	}
	t.Live.Ref, t.Live.Shown = ref, text
}

// stream shows the turn's news through the platform's native stream,
// starting it if needed. It reports false when the turn is not streamed
// (no Streamer, refused, or a live message was already posted): the
// caller posts and edits instead.
func (s *Screen) stream(ctx context.Context, t *live.Turn) bool {
	ls := &t.Live.Stream
	if ls.S == nil {
		st, ok := s.platform.(bridges.Streamer)
		if !ok || ls.Refused || t.Live.Posted {
			return false
		}
		chunks, cur := t.StreamChunks(s.MaxRunes())
		str, err := st.StartStream(ctx, s.key, t.ReplyTo, t.ReplyUser, chunks)
		if err != nil {
			if !errors.Is(err, bridges.ErrStreamRefused) {
				s.log.Warn("start stream; posting and editing instead", "err", err)
			}
			ls.Refused = true
			return false
		}
		ls.S = str
		t.Live.Ref = str.Ref()
		t.Live.Ref.At = s.now()
		s.recordStream(ctx, t.Live.Ref)
		t.Committed(cur, chunks)
		return true
	}
	if ls.Broken {
		return true
	}
	chunks, cur := t.StreamChunks(s.MaxRunes())
	if len(chunks) == 0 {
		return true
	}
	if !s.w.MayPost() {
		return true
	}
	if err := ls.S.Append(ctx, chunks); err != nil {
		s.log.Warn("append to stream; the answer will be posted", "err", err)
		ls.Broken = true
		return true
	}
	t.Committed(cur, chunks)
	return true
}

// StopStream ends the turn's open stream with last (e.g. a note that the
// turn was interrupted), if there is one (live.Turn.StopStream).
func (s *Screen) StopStream(ctx context.Context, t *live.Turn, last string) {
	t.StopStream(ctx, s.log, s.MaxRunes(), last)
}
