package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// onExit handles the end of the session's process. An unexpected end is a
// crash: the thread is told, open cards expire, and the messages the agent
// had not finished go back to pending, to be re-delivered once to the
// resumed session with a note that the previous turn was interrupted.
func (cv *conversation) onExit(ctx context.Context, e streamjson.Exit) {
	cv.sess = nil
	cv.core.opts.Metrics.Exit(cv.bot.Name, e.Reason)
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
	switch oom := cv.limitExitNotice(e); {
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

// interruptTurn ends a turn cut short by the process ending: the live
// message keeps what it showed, marked as interrupted.
func (cv *conversation) interruptTurn(ctx context.Context) {
	if t := cv.turn; t != nil {
		if t.Live.Posted {
			cv.finishLive(ctx, render.Tail(render.Join(t.Segs)+"\n\n_(interrupted)_", cv.screen.MaxRunes()))
		}
		cv.screen.StopStream(ctx, t.Turn, "\n\n_(interrupted)_")
	}
	cv.endTurn(ctx)
}

// closeSession stops the live process (if any) and forgets it: its later
// events are ignored. Open cards close with status.
func (cv *conversation) closeSession(ctx context.Context, status string) {
	cv.cards.ExpireAll(ctx, status)
	cv.endTurn(ctx)
	if cv.sess == nil {
		return
	}
	if err := cv.sess.Interrupt(ctx); err != nil {
		cv.log.Debug("interrupt before close", "err", err)
	}
	cv.sess = nil
	cv.gen++ // events still queued from the old process are ignored
	rctx, cancel := context.WithTimeout(ctx, removeTimeout)
	defer cancel()
	if err := cv.core.pool.Remove(rctx, cv.id); err != nil {
		cv.log.Warn("stop agent process", "err", err)
	}
}

// restartProcess stops the idle process so the next message spawns one with
// the current settings (resuming the session).
func (cv *conversation) restartProcess(ctx context.Context) {
	cv.closeSession(ctx, "⌛ Expired: the agent restarted.")
	cv.deliverPending(ctx)
}

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
		c.restore(ctx, id, inOutbox{})
	}
	for _, id := range w.inboxConvs {
		c.restore(ctx, id, inPoke{})
	}
	if len(w.staleCards)+len(w.outboxConvs)+len(w.inboxConvs) > 0 {
		c.log.Info("startup recovery", "stale_cards", len(w.staleCards), "conversations_with_replies", len(w.outboxConvs),
			"conversations_with_messages", len(w.inboxConvs))
	}
}

// restore hands in to the worker of conversation id, starting it.
func (c *Core) restore(ctx context.Context, id string, in input) {
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

// closeStaleCards closes the cards of permission requests that were open
// when the previous run (or the conversation's previous holder) ended:
// their processes are gone. The decisions are recorded through st (the
// new tenure's fenced store with replicas) before the cards are edited,
// so a claimer that lost the conversation meanwhile edits nothing.
//
// A request without a stored card reference (its holder died between
// posting the card and storing where it shows, or before posting it) is
// closed through its conversation's key: the closed card is posted under
// the card's Idem with Retry, so an adapter that finds the card returns
// it instead of posting again, and the card is then edited to the closed
// text; a card that never reached the platform shows closed at once.
func (c *Core) closeStaleCards(ctx context.Context, st *store.Store, open []store.Approval) {
	const status = "⌛ Expired: bridge restarted."
	keys := make(map[string]bridges.ConversationKey) // conversation id → key, for requests without a card reference
	for _, a := range open {
		if _, err := st.RecordApprovalDecision(ctx, a.ID, store.DecisionExpired, "", "bridge restarted"); err != nil {
			c.log.Warn("startup: expire approval", "request", a.ID, "err", err)
			if errors.Is(err, store.ErrFenced) {
				return
			}
		}
		ref, ok := DecodeCardRef(a.CardRef)
		if !ok {
			key, found := keys[a.ConversationID]
			if !found {
				conv, err := c.st.ConversationByID(ctx, a.ConversationID)
				if err != nil {
					c.log.Warn("startup: close stale card without a reference: load conversation", "request", a.ID, "err", err)
					continue
				}
				key = bridges.ConversationKey(conv.Key)
				keys[a.ConversationID] = key
			}
			ref = bridges.MessageRef{Key: key}
		}
		p := c.platform(ref.Key.Bot)
		if p == nil {
			continue
		}
		text := textcut.Truncate(render.DecidedText(render.StaleCardBody(a, c.workdirOf(ref.Key.Bot)), status), maxRunesOf(p))
		closed := bridges.Message{Text: text, CardID: a.ID}
		if !ok {
			found, err := p.Post(ctx, ref.Key, bridges.Message{Text: text, CardID: a.ID, Idem: CardIdem(a.ConversationID, a.ID), Retry: true})
			if err != nil {
				c.log.Warn("startup: close stale card without a reference", "request", a.ID, "err", err)
				continue
			}
			// The card found (or the closed card just posted, edited to
			// the same text) was posted when the request was made.
			ref = bridges.MessageRef{Key: ref.Key, ID: found.ID, At: a.RequestedAt}
		}
		instead := bridges.Message{Text: status, ReplyTo: ref.ID}
		if _, err := delivery.EditOrPost(ctx, p, p.Limits(), c.clock.Now(), ref, closed, instead); err != nil {
			c.log.Warn("startup: close stale card", "request", a.ID, "err", err)
		}
	}
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

func maxRunesOf(p bridges.Platform) int {
	if n := p.Limits().MaxMessageRunes; n > 0 {
		return n
	}
	return render.DefaultMaxRunes
}
