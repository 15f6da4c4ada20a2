package worker

import (
	"context"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds the limits as a conversation meets them: the bots' spend
// limits (SpendGate, bridges/features/spend) before a message goes to the agent,
// and the agent's resource limits (agents.*.resources) when it hits them.

// limitGate runs the spend gate for ledger message m (see SpendGate.Admit).
// Without a gate the config has no limits (Run refuses to start otherwise).
func (cv *conversation) limitGate(ctx context.Context, m store.InboxMessage) (ok bool, notices []string, err error) {
	if cv.opts.Spend == nil {
		return true, nil, nil
	}
	return cv.opts.Spend.Admit(ctx, cv.bot, m.ID, m.UserID, m.UserName, m.Origin == store.OriginPerson, cv.opts.Clock.Now())
}

// budgetLines describes, for !cost, what user has left of every budget of
// the bot's limit ("" when the bot has none).
func (cv *conversation) budgetLines(ctx context.Context, user string) (string, error) {
	if cv.opts.Spend == nil {
		return "", nil
	}
	return cv.opts.Spend.Left(ctx, cv.bot, user, cv.opts.Clock.Now())
}

// limitVerdict is what deliverPending does with a message after the gate.
type limitVerdict int

const (
	limitSend    limitVerdict = iota // within the limits: send it
	limitRefused                     // refused and finished: go on with the next message
	limitRetry                       // the store failed: keep it pending, retry later
)

// admit runs the spend-limit gate for the first delivery of ledger message
// m (a redelivery after a crash was admitted already): it posts the
// warnings, or posts the refusal and finishes m as cancelled.
func (cv *conversation) admit(ctx context.Context, m store.InboxMessage) limitVerdict {
	if m.Attempts > 0 {
		return limitSend
	}
	ok, notices, err := cv.limitGate(ctx, m)
	if err != nil {
		cv.log.Error("check spend limits; the message stays pending", "ledger", m.ID, "err", err)
		cv.timers.After(time.Second, timerKey{timerRetry, ""})
		return limitRetry
	}
	for _, n := range notices {
		cv.notice(ctx, n)
	}
	if ok {
		return limitSend
	}
	cv.log.Info("message refused: spend limit reached", "ledger", m.ID, "user", m.UserID)
	cv.finishInbox(ctx, m.ID, store.InboxCancelled, "spend limit reached")
	return limitRefused
}

// The agent's resource limits (agents.*.resources) are enforced by the
// agent package in a cgroup per process (see agents.Spawner). Here a hit
// is counted in metrics and told in the conversation, spaced
// (agents.LimitNotices).

// onLimitHit counts a hit of the agent's cgroup limits and tells the
// conversation (a kill of the agent itself is told by onExit).
func (cv *conversation) onLimitHit(ctx context.Context, e streamjson.LimitHit) {
	cv.opts.Metrics.LimitHit(cv.profile.Name, e.Limit, e.Count)
	if e.AfterExit {
		return
	}
	if n := cv.limitNoticed.Due(e.Limit, cv.profile.Resources, cv.opts.Clock.Now()); n != "" {
		cv.notice(ctx, n)
	}
}
