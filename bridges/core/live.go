package core

import (
	"context"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/config"
)

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
	if wait := cv.budget.take(cv.core.clock.Now(), cv.limits.EditInterval, false); wait > 0 {
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
	cv.budget.take(cv.core.clock.Now(), cv.limits.EditInterval, true)
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
	cv.budget.take(cv.core.clock.Now(), cv.limits.EditInterval, true)
	_, err := cv.platform.Post(ctx, cv.key, bridges.Message{Text: text})
	return err
}
