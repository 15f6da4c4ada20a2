package core

import (
	"context"
	"strings"

	"github.com/agentbridge/agentbridge/config"
)

// Progress lines: a platform that does not stream turns into a live
// message (no Editor) shows nothing between the user's message and the
// answer; Limits.ProgressInterval asks for a short line instead while a
// long turn runs, at most one per interval.

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
	line := "⏳ Still working… " + formatWait(cv.core.clock.Now().Sub(t.start)) + " so far"
	if verbosity(cv.bot) != config.VerbosityQuiet {
		if last := lastToolLine(t.segs); last != "" {
			line += " · last: " + last
		}
	}
	cv.notice(ctx, line)
}

// lastToolLine is the first line of the turn's latest tool line, without
// its "› " marker; "" if the turn called no tool.
func lastToolLine(segs []segment) string {
	for i := len(segs) - 1; i >= 0; i-- {
		if segs[i].kind == segTool {
			first, _, _ := strings.Cut(strings.TrimSpace(segs[i].text), "\n")
			return strings.TrimPrefix(first, "› ")
		}
	}
	return ""
}
