package core

import (
	"context"
	"time"

	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// SpendGate enforces the bots' spend limits (config limits; bridges/spend
// implements it). Its methods may block on the store; safe for concurrent use.
type SpendGate interface {
	// Admit decides whether a message of user (userName) may go to bot's
	// agent at now: ok=false with the refusal to post when a budget is used
	// up; notices are the texts to post (refusal, warnings). person says a
	// person wrote it (an admin's exemption does not follow a schedule).
	// An error means nothing was checked: the message stays pending.
	Admit(ctx context.Context, bot *config.Bot, user, userName string, person bool, now time.Time) (ok bool, notices []string, err error)
	// Left is the !cost lines of what user has left of bot's budgets, ""
	// when the bot has no limit.
	Left(ctx context.Context, bot *config.Bot, user string, now time.Time) (string, error)
}

// limitGate runs the spend gate for ledger message m (see SpendGate.Admit).
// Without a gate the config has no limits (Run refuses to start otherwise).
func (cv *conversation) limitGate(ctx context.Context, m store.InboxMessage) (ok bool, notices []string, err error) {
	if cv.core.opts.Spend == nil {
		return true, nil, nil
	}
	return cv.core.opts.Spend.Admit(ctx, cv.bot, m.UserID, m.UserName, m.Origin == OriginPerson, cv.core.clock.Now())
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
