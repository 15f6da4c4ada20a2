package screen

import (
	"context"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/live"
	"github.com/agentbridge/agentbridge/bridges/core/render"
)

// The working indicator (Typer: Slack's thread status or reaction,
// Discord's typing, WhatsApp's composing) costs platform calls, so a turn
// shows it only once it has run for config status_delay without ending:
// a turn that answers sooner costs exactly its reply. Where it is free
// (Limits.FreeTyping: the web console) it is shown at once. The indicator
// is cleared when the turn ends, after its reply is posted, so that an
// adapter whose post already clears it (Slack's thread status) needs no
// call of its own (see Typer).

// StatusWait is how long a turn that just began waits before the working
// indicator shows (delay is config status_delay): 0 to show it now, and
// ok false when there is nothing to show (no Typer, or it shows already).
func (s *Screen) StatusWait(delay time.Duration) (wait time.Duration, ok bool) {
	if _, typer := s.platform.(bridges.Typer); !typer || s.statusShown {
		return 0, false
	}
	if delay > 0 && !s.limits.FreeTyping {
		return delay, true
	}
	return 0, true
}

// ShowStatus turns the indicator on (the worker asks it while a turn
// runs).
func (s *Screen) ShowStatus(ctx context.Context) {
	ty, ok := s.platform.(bridges.Typer)
	if !ok || s.statusShown || !s.w.MayPost() {
		return
	}
	s.statusShown = true
	if err := ty.SetTyping(ctx, s.key, true); err != nil {
		s.log.Debug("show working indicator", "err", err)
	}
}

// ClearStatus turns a shown indicator off.
func (s *Screen) ClearStatus(ctx context.Context) {
	if !s.statusShown {
		return
	}
	s.statusShown = false
	ty, ok := s.platform.(bridges.Typer)
	if !ok {
		return // the adapter was replaced by one without an indicator
	}
	if err := ty.SetTyping(ctx, s.key, false); err != nil {
		s.log.Debug("clear working indicator", "err", err)
	}
}

// Progress lines: a platform that does not stream turns into a live
// message (no Editor, or Limits.WholeAnswers) shows nothing between the
// user's message and the answer; Limits.ProgressInterval asks for a short
// line instead while a long turn runs, at most one per interval: one
// message, edited where the platform can.

// ProgressEvery is the interval of progress lines for a turn, 0 for none
// (the turn streams, quiet says whether the bot is quiet).
func (s *Screen) ProgressEvery(quiet bool) time.Duration {
	if s.Streams(quiet) {
		return 0
	}
	return s.limits.ProgressInterval
}

// ShowProgress shows how long turn t has taken and, unless the bot is
// quiet, its latest tool call: an edit of its previous line while the
// platform can edit it (Limits.EditMaxAge), else a new message, so that a
// long turn makes one message (per edit window), not a stream of
// identical ones.
func (s *Screen) ShowProgress(ctx context.Context, t *live.Turn, quiet bool) {
	line := "⏳ Still working… " + render.FormatWait(s.now().Sub(t.Start)) + " so far"
	if !quiet {
		if last := render.LastToolLine(t.Segs); last != "" {
			line += " · last: " + last
		}
	}
	s.Take(true)
	m := bridges.Message{Text: line}
	var ref bridges.MessageRef
	var err error
	if t.Progress.ID != "" {
		ref, err = s.EditOrPost(ctx, t.Progress, m, m)
	} else {
		ref, err = s.Post(ctx, m)
	}
	if err != nil {
		s.log.Warn("show progress", "err", err)
		return
	}
	t.Progress = ref
}
