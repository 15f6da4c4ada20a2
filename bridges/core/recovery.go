package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/store"
)

// prepareRecovery runs before any platform starts. Messages that were sent
// to an agent process of the previous run but not finished go back to
// pending (counting an attempt), so they are delivered again, in order,
// before anything new; and it notes what recoverStartup must finish.
func (c *Core) prepareRecovery(ctx context.Context) (startupWork, error) {
	var w startupWork
	ids, err := c.st.ConversationsWithUndelivered(ctx)
	if err != nil {
		return w, fmt.Errorf("recover interrupted messages: %w", err)
	}
	for _, id := range ids {
		if _, err := c.st.ResetForRedelivery(ctx, id); err != nil {
			return w, fmt.Errorf("recover interrupted messages: %w", err)
		}
	}
	w.inboxConvs = ids
	if w.staleCards, err = c.st.OpenApprovals(ctx); err != nil {
		return w, fmt.Errorf("recover open approvals: %w", err)
	}
	pending, err := c.st.PendingOutbox(ctx)
	if err != nil {
		return w, fmt.Errorf("recover pending replies: %w", err)
	}
	seen := make(map[string]bool)
	for _, m := range pending {
		if !seen[m.ConversationID] {
			seen[m.ConversationID] = true
			w.outboxConvs = append(w.outboxConvs, m.ConversationID)
		}
	}
	open, err := c.st.ConversationsWithOpenStreams(ctx)
	if err != nil {
		return w, fmt.Errorf("recover open streams: %w", err)
	}
	for _, id := range open { // their streams are closed with the replies (closeCutStream)
		if !seen[id] {
			seen[id] = true
			w.outboxConvs = append(w.outboxConvs, id)
		}
	}
	return w, nil
}

// recoverStartup finishes what the previous run left open, while the
// platforms already run: approval cards are closed as expired ("bridge
// restarted"), replies still in the outbox are posted, and pending ledger
// messages are delivered.
func (c *Core) recoverStartup(ctx context.Context, w startupWork) {
	c.closeStaleCards(ctx, c.st, w.staleCards)
	for _, id := range w.outboxConvs {
		c.restore(ctx, id, worker.RecoverOutbox())
	}
	for _, id := range w.inboxConvs {
		c.restore(ctx, id, worker.Poke())
	}
	if len(w.staleCards)+len(w.outboxConvs)+len(w.inboxConvs) > 0 {
		c.log.Info("startup recovery", "stale_cards", len(w.staleCards), "conversations_with_replies", len(w.outboxConvs),
			"conversations_with_messages", len(w.inboxConvs))
	}
}

// restore hands in to the worker of conversation id, starting it.
func (c *Core) restore(ctx context.Context, id string, in worker.Input) {
	conv, err := c.st.ConversationByID(ctx, id)
	if err != nil {
		if ctx.Err() == nil {
			c.log.Error("startup: load conversation", "conversation", id, "err", err)
		}
		return
	}
	if _, err := c.deliver(conv, in); err != nil && ctx.Err() == nil && !errors.Is(err, ownership.ErrHeldElsewhere) {
		c.log.Warn("startup: conversation not restored", "conversation", id, "err", err)
	}
}

// closeStaleCards closes the cards of the permission requests open that a
// previous run or holder left (delivery.StaleCards), recording the
// decisions through st.
func (c *Core) closeStaleCards(ctx context.Context, st *store.Store, open []store.Approval) {
	delivery.StaleCards{Store: c.st, Platform: c.platform, Workdir: c.workdirOf, Now: c.clock.Now, Log: c.log}.Close(ctx, st, open)
}

// workdirOf returns the agent workdir of bot, for relative paths in cards.
func (c *Core) workdirOf(bot string) string {
	if b := c.cfg().Bot(bot); b != nil {
		if p := c.cfg().Agents[b.Agent]; p != nil {
			return p.Workdir
		}
	}
	return ""
}
