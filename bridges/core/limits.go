package core

import (
	"context"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds the limits as a conversation meets them: the bots' spend
// limits (SpendGate, bridges/features/spend) before a message goes to the agent,
// and the agent's resource limits (agents.*.resources) when it hits them.

// limitGate runs the spend gate for ledger message m (see SpendGate.Admit).
// Without a gate the config has no limits (Run refuses to start otherwise).
func (cv *conversation) limitGate(ctx context.Context, m store.InboxMessage) (ok bool, notices []string, err error) {
	if cv.core.opts.Spend == nil {
		return true, nil, nil
	}
	return cv.core.opts.Spend.Admit(ctx, cv.bot, m.ID, m.UserID, m.UserName, m.Origin == OriginPerson, cv.core.clock.Now())
}

// budgetLines describes, for !cost, what user has left of every budget of
// the bot's limit ("" when the bot has none).
func (cv *conversation) budgetLines(ctx context.Context, user string) (string, error) {
	if cv.core.opts.Spend == nil {
		return "", nil
	}
	return cv.core.opts.Spend.Left(ctx, cv.bot, user, cv.core.clock.Now())
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
		cv.after(time.Second, timerRetry, "")
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
// is counted in metrics and told in the conversation: at most once per
// limitNoticeEvery and kind, since a fork bomb hits its cap thousands of
// times a second.

// limitNoticeEvery spaces the notices of one kind of limit hit.
const limitNoticeEvery = 5 * time.Minute

// onLimitHit counts a hit of the agent's cgroup limits and tells the
// conversation (a kill of the agent itself is told by onExit).
func (cv *conversation) onLimitHit(ctx context.Context, e streamjson.LimitHit) {
	cv.core.opts.Metrics.LimitHit(cv.profile.Name, e.Limit, e.Count)
	if e.AfterExit {
		return
	}
	now := cv.core.clock.Now()
	if last, ok := cv.limitNoticed[e.Limit]; ok && now.Sub(last) < limitNoticeEvery {
		return
	}
	if cv.limitNoticed == nil {
		cv.limitNoticed = map[string]time.Time{}
	}
	cv.limitNoticed[e.Limit] = now
	if n := agents.LimitNotice(e.Limit, cv.profile.Resources); n != "" {
		cv.notice(ctx, n)
	}
}

// limitExitNotice is what onExit tells when the agent itself was killed by
// its memory cap, or "".
func (cv *conversation) limitExitNotice(e streamjson.Exit) string {
	return agents.LimitExitNotice(e.Limit, cv.profile.Resources)
}

// limitsStatusLine describes the profile's resource limits for !status.
func (cv *conversation) limitsStatusLine() string {
	return cv.core.opts.Spawner.LimitsStatusLine(cv.profile.Resources)
}
