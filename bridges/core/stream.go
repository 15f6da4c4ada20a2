package core

import (
	"context"
	"errors"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/config"
)

// streamLive shows the turn's news through the platform's native stream,
// starting it if needed. It reports false when the turn is not streamed
// (no Streamer, refused, or a live message was already posted): the
// caller posts and edits instead.
func (cv *conversation) streamLive(ctx context.Context) bool {
	t := cv.turn
	ls := &t.Live.Stream
	if ls.S == nil {
		st, ok := cv.platform.(bridges.Streamer)
		if !ok || ls.Refused || t.Live.Posted {
			return false
		}
		chunks, cur := t.StreamChunks(cv.maxRunes())
		s, err := st.StartStream(ctx, cv.key, t.replyTo, t.replyUser, chunks)
		if err != nil {
			if !errors.Is(err, bridges.ErrStreamRefused) {
				cv.log.Warn("start stream; posting and editing instead", "err", err)
			}
			ls.Refused = true
			return false
		}
		ls.S = s
		t.Live.Ref = s.Ref()
		t.Live.Ref.At = cv.core.clock.Now()
		cv.recordStream(ctx, t.Live.Ref)
		t.Committed(cur, chunks)
		return true
	}
	if ls.Broken {
		return true
	}
	chunks, cur := t.StreamChunks(cv.maxRunes())
	if len(chunks) == 0 {
		return true
	}
	if !cv.mayPost() {
		return true
	}
	if err := ls.S.Append(ctx, chunks); err != nil {
		cv.log.Warn("append to stream; the answer will be posted", "err", err)
		ls.Broken = true
		return true
	}
	t.Committed(cur, chunks)
	return true
}

// stopStream ends the turn's open stream with last (e.g. a note that the
// turn was interrupted), if there is one (live.Turn.StopStream).
func (cv *conversation) stopStream(ctx context.Context, last string) {
	if t := cv.turn; t != nil {
		t.StopStream(ctx, cv.log, cv.maxRunes(), last)
	}
}

// Progress lines: a platform that does not stream turns into a live
// message (no Editor, or Limits.WholeAnswers) shows nothing between the
// user's message and the answer; Limits.ProgressInterval asks for a short
// line instead while a long turn runs, at most one per interval: one
// message, edited where the platform can (showProgress).

// progressing reports whether this conversation gets progress lines.
func (cv *conversation) progressing() bool {
	return cv.limits.ProgressInterval > 0 && !cv.streams()
}

// armProgress schedules the turn's next progress line.
func (cv *conversation) armProgress() {
	if cv.progressing() {
		cv.after(cv.limits.ProgressInterval, timerProgress, "")
	}
}

// progressLine posts how long the running turn has taken and, unless the
// bot is quiet, its latest tool call; then schedules the next one. While
// a card waits for someone nothing is posted: the card says what the
// turn waits for.
func (cv *conversation) progressLine(ctx context.Context) {
	t := cv.turn
	if t == nil {
		return
	}
	defer cv.armProgress()
	if cv.cards.Len() > 0 {
		return
	}
	line := "⏳ Still working… " + render.FormatWait(cv.core.clock.Now().Sub(t.start)) + " so far"
	if verbosity(cv.bot) != config.VerbosityQuiet {
		if last := render.LastToolLine(t.Segs); last != "" {
			line += " · last: " + last
		}
	}
	cv.showProgress(ctx, t, line)
}

// showProgress shows the turn's progress line: an edit of its previous
// one while the platform can edit it (Limits.EditMaxAge), else a new
// message, so that a long turn makes one message (per edit window) and
// no stream of identical ones.
func (cv *conversation) showProgress(ctx context.Context, t *turn, line string) {
	cv.budget.Take(cv.core.clock.Now(), cv.limits.EditInterval, true)
	m := bridges.Message{Text: line}
	var ref bridges.MessageRef
	var err error
	if t.progress.ID != "" {
		ref, err = cv.editOrPost(ctx, t.progress, m, m)
	} else {
		ref, err = cv.post(ctx, m)
	}
	if err != nil {
		cv.log.Warn("show progress", "err", err)
		return
	}
	t.progress = ref
}

// post posts m into the conversation and stamps the ref with the core's
// clock (for Limits.EditMaxAge).
func (cv *conversation) post(ctx context.Context, m bridges.Message) (bridges.MessageRef, error) {
	if !cv.mayPost() {
		return bridges.MessageRef{}, errTenureOver
	}
	ref, err := cv.platform.Post(ctx, cv.key, m)
	if err != nil {
		return ref, err
	}
	cv.core.platformBack(cv.bot.Name)
	ref.At = cv.core.clock.Now()
	return ref, nil
}

// editOrPost is delivery.EditOrPost for this conversation's platform and clock.
func (cv *conversation) editOrPost(ctx context.Context, ref bridges.MessageRef, m, instead bridges.Message) (bridges.MessageRef, error) {
	if !cv.mayPost() {
		return bridges.MessageRef{}, errTenureOver
	}
	ref, err := delivery.EditOrPost(ctx, cv.platform, cv.limits, cv.core.clock.Now(), ref, m, instead)
	if err == nil {
		cv.core.platformBack(cv.bot.Name)
	}
	return ref, err
}

// This file holds what a native stream (bridges.Streamer) shows beyond
// text and tool tasks: the agent's to-do list as a plan (render.Plan), a tool waiting
// for a person's decision as a pending task, and the 👍/👎 feedback
// buttons under a streamed answer with the recording of their clicks.

// notePlanTool updates the conversation's plan with a tool call (or, with
// r, its result) and, when it changed, has the turn's stream show it.
func (cv *conversation) notePlanTool(ctx context.Context, u streamjson.ToolUse, r *streamjson.ToolResult) {
	changed := false
	if r == nil {
		changed = cv.plan.OnToolUse(u)
	} else {
		changed = cv.plan.OnResult(u, *r)
	}
	if !changed || cv.turn == nil {
		return
	}
	cv.turn.Live.Stream.Plan = cv.plan.Snapshot()
	cv.turn.Live.Dirty = true
	cv.touchLive(ctx)
}
