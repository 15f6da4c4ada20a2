package core

import (
	"context"

	"github.com/agentbridge/agentbridge/bridges"
)

// This file holds how the core spares platform calls beside the
// per-channel budget of posts and edits (delivery.Budget): the working
// indicator shown only once a turn runs long.

// The working indicator (Typer: Slack's thread status or reaction,
// Discord's typing, WhatsApp's composing) costs platform calls, so a turn
// shows it only once it has run for config status_delay without ending:
// a turn that answers sooner costs exactly its reply. Where it is free
// (Limits.FreeTyping: the web console) it is shown at once. The indicator is
// cleared when the turn ends, after its reply is posted, so that an
// adapter whose post already clears it (Slack's thread status) needs no
// call of its own (see Typer).

// scheduleStatus arms the indicator for a turn that just began.
func (cv *conversation) scheduleStatus(ctx context.Context) {
	if _, ok := cv.platform.(bridges.Typer); !ok || cv.statusShown {
		return
	}
	if d := cv.core.cfg().StatusDelay; d > 0 && !cv.limits.FreeTyping {
		cv.after(d, timerStatus, "")
		return
	}
	cv.showStatus(ctx)
}

// showStatus turns the indicator on if a turn is still running.
func (cv *conversation) showStatus(ctx context.Context) {
	ty, ok := cv.platform.(bridges.Typer)
	if !ok || cv.turn == nil || cv.statusShown || !cv.mayPost() {
		return
	}
	cv.statusShown = true
	if err := ty.SetTyping(ctx, cv.key, true); err != nil {
		cv.log.Debug("show working indicator", "err", err)
	}
}

// clearStatus cancels a pending indicator and turns a shown one off.
func (cv *conversation) clearStatus(ctx context.Context) {
	cv.cancelTimer(timerStatus, "")
	if !cv.statusShown {
		return
	}
	cv.statusShown = false
	if err := cv.platform.(bridges.Typer).SetTyping(ctx, cv.key, false); err != nil {
		cv.log.Debug("clear working indicator", "err", err)
	}
}
