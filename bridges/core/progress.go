package core

import (
	"context"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/config"
)

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
	if len(cv.cards) > 0 {
		return
	}
	line := "⏳ Still working… " + render.FormatWait(cv.core.clock.Now().Sub(t.start)) + " so far"
	if verbosity(cv.bot) != config.VerbosityQuiet {
		if last := render.LastToolLine(t.segs); last != "" {
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
	cv.budget.take(cv.core.clock.Now(), cv.limits.EditInterval, true)
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
