package worker

import (
	"context"
	"fmt"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// onExit handles the end of the session's process. An unexpected end is a
// crash: the thread is told, open cards expire, and the messages the agent
// had not finished go back to pending, to be re-delivered once to the
// resumed session with a note that the previous turn was interrupted.
func (cv *conversation) onExit(ctx context.Context, e streamjson.Exit) {
	cv.sess = nil
	cv.opts.Metrics.Exit(cv.bot.Name, e.Reason)
	if e.Expected {
		cv.log.Debug("agent stopped", "reason", e.Reason)
		cv.cards.ExpireAll(ctx, "⌛ Expired: the agent stopped.")
		cv.interruptTurn(ctx)
		// A process evicted between its spawn and the first write leaves
		// pending messages behind: they need a new one.
		cv.deliverPending(ctx)
		return
	}
	cv.log.Warn("agent process stopped unexpectedly", "code", e.Code, "err", e.Err, "stderr_tail", textcut.Truncate(e.StderrTail, 500))
	cv.cards.ExpireAll(ctx, "⌛ Expired: agent restarted.")
	cv.interruptTurn(ctx)
	var n int
	st, id := cv.st, cv.id
	kept, err := cv.writes.Record(ctx, delivery.Write{What: "reset for redelivery", Do: func(ctx context.Context) error {
		reset, err := st.ResetForRedelivery(ctx, id)
		n = reset
		return err
	}})
	switch {
	case err != nil:
		cv.log.Error("reset messages for redelivery", "err", err)
	case kept:
		n = len(cv.inflight) // delivered again once the disk has room
	}
	if cv.freshRetry {
		// The agent never saw these messages: the reset is not a crash.
		for _, sm := range cv.inflight {
			cv.spared[sm.ledgerID]++
		}
	}
	clear(cv.inflight)
	clear(cv.stopUnstarted)
	how := fmt.Sprintf("exit code %d", e.Code)
	if e.Code < 0 && e.Err != nil {
		how = textcut.OneLine(e.Err.Error(), 80)
	}
	switch oom := agents.LimitExitNotice(e.Limit, cv.profile.Resources); {
	case oom != "" && n > 0 && !cv.freshRetry:
		cv.notice(ctx, oom+" Delivering the interrupted message again…")
	case oom != "" && !cv.freshRetry:
		cv.notice(ctx, oom)
	case cv.freshRetry:
		cv.notice(ctx, "⚠️ The previous session could not be resumed, so the agent starts a new one; it does not remember the earlier messages of this thread.")
	case n > 0:
		cv.notice(ctx, "⚠️ The agent process stopped unexpectedly ("+how+"). Resuming the session and delivering the interrupted message again…")
	default:
		cv.notice(ctx, "⚠️ The agent process stopped unexpectedly ("+how+"). It will resume with the next message.")
	}
	cv.deliverPending(ctx)
}

// restartProcess stops the idle process so the next message spawns one with
// the current settings (resuming the session).
func (cv *conversation) restartProcess(ctx context.Context) {
	cv.closeSession(ctx, "⌛ Expired: the agent restarted.")
	cv.deliverPending(ctx)
}
