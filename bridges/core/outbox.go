package core

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/metrics"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
	"github.com/prometheus/client_golang/prometheus"
)

// markPostedTimeout bounds recording that a reply was posted, which
// outlives the bridge's stop.
const markPostedTimeout = 10 * time.Second

// lateNoteAfter is how long a reply must have waited since its first failed
// attempt for its delivery to say that it is late.
const lateNoteAfter = 30 * time.Second

// flushOutbox posts the conversation's pending replies in order. A reply
// that fails for a transient reason (anything not IsPermanent: network
// errors, 5xx, 429, a disconnected platform) stays pending and is retried
// with exponential backoff capped at maxOutboxBackoff, later replies
// waiting behind it to keep the order, until it is older than config
// delivery.give_up_after. A permanent error, or a reply past that age,
// fails the reply at once: it is marked failed, logged as an error,
// counted, and a short notice is attempted; the next reply goes on. The
// first reply that gets through after failed attempts says it is late
// (lateNote).
func (cv *conversation) flushOutbox(ctx context.Context) {
	if cv.outboxRetrying {
		return // a retry is scheduled; keep the order
	}
	rows, err := cv.core.st.PendingOutboxForConversation(ctx, cv.id)
	if err != nil {
		if ctx.Err() == nil {
			cv.log.Error("read pending replies", "err", err)
			cv.retryOutbox()
		}
		return
	}
	for _, row := range rows {
		if cv.waitsForMark(row.ID) {
			continue // posted; recorded once the disk has room (outbox.go)
		}
		err := cv.postReply(ctx, row)
		if err == nil {
			cv.markPosted(ctx, row.ID)
			if row.Attempts > 0 {
				cv.log.Info("reply posted after failed attempts", "outbox", row.ID, "attempts", row.Attempts,
					"waited", cv.core.clock.Now().Sub(row.FirstFailedAt).Round(time.Second))
			}
			continue
		}
		if ctx.Err() != nil {
			return // stopping: the reply stays pending for the next run
		}
		cv.core.opts.Metrics.OutboxFailure(cv.bot.Name)
		reason := cv.giveUpReason(row, err)
		if reason == "" {
			upd, merr := cv.core.st.MarkOutboxRetry(ctx, row.ID, err.Error())
			if merr != nil {
				cv.log.Error("record failed reply", "outbox", row.ID, "err", merr)
			} else if upd.Attempts == 1 {
				cv.log.Warn("post reply failed; will retry until it is delivered or given up", "outbox", row.ID,
					"give_up_after", cv.core.giveUpAfter(), "err", err)
			} else {
				cv.log.Debug("post reply failed again; will retry", "outbox", row.ID, "attempts", upd.Attempts, "err", err)
			}
			cv.retryOutbox()
			return
		}
		upd, merr := cv.core.st.MarkOutboxFailed(ctx, row.ID, err.Error())
		if merr != nil {
			cv.log.Error("record failed reply", "outbox", row.ID, "err", merr)
			cv.retryOutbox()
			return
		}
		cv.core.opts.Metrics.OutboxGivenUp(cv.bot.Name, reason)
		cv.log.Error("reply could not be posted; giving up", "outbox", row.ID, "reason", reason,
			"attempts", upd.Attempts, "age", cv.core.clock.Now().Sub(row.CreatedAt).Round(time.Second), "err", err)
		cv.tellGivenUp(ctx, row, cv.failedNotice(reason, row, err))
	}
	cv.outboxDelay = 0
}

// tellGivenUp posts notice, which says that reply row was given up, in the
// conversation. When the conversation cannot take it either (its channel
// is gone, the bot was removed), the first such failure of the
// conversation is logged as an error with the bot and conversation, later
// ones at debug level: the given-up replies are already logged one by one,
// counted in agentbridge_outbox_failed_total and shown in /healthz
// (failed_24h) and the operator view.
func (cv *conversation) tellGivenUp(ctx context.Context, row store.OutboxMessage, notice string) {
	err := cv.postNotice(ctx, notice)
	switch {
	case err == nil || ctx.Err() != nil:
	case !cv.untoldGiveUp:
		cv.untoldGiveUp = true
		cv.log.Error("could not tell the conversation that a reply was given up; /healthz failed_24h and the operator view show it",
			"bot", cv.bot.Name, "outbox", row.ID, "err", err)
	default:
		cv.log.Debug("could not tell the conversation that another reply was given up", "outbox", row.ID, "err", err)
	}
}

// Why a reply is given up (the reason label of agentbridge_outbox_failed_total).
const (
	giveUpPermanent = "permanent" // the platform refused it for good
	giveUpExpired   = "expired"   // still failing when older than delivery.give_up_after
)

// giveUpReason says whether a reply whose post failed with err is given up
// (and why), or "" to keep it pending.
func (cv *conversation) giveUpReason(row store.OutboxMessage, err error) string {
	switch {
	case bridges.IsPermanent(err):
		return giveUpPermanent
	case cv.core.clock.Now().Sub(row.CreatedAt) >= cv.core.giveUpAfter():
		return giveUpExpired
	}
	return ""
}

// failedNotice tells the conversation that a reply was given up.
func (cv *conversation) failedNotice(reason string, row store.OutboxMessage, err error) string {
	if reason == giveUpExpired {
		return fmt.Sprintf("⚠️ A reply of the agent could not be posted: %s kept refusing it for %s (%s). Ask the agent to repeat it if needed.",
			cv.platformTitle(), render.FormatOutage(cv.core.clock.Now().Sub(row.CreatedAt)), render.OneLine(err.Error(), 120))
	}
	return fmt.Sprintf("⚠️ A reply of the agent could not be posted (%s). Ask the agent to repeat it if needed.",
		render.OneLine(err.Error(), 120))
}

// giveUpAfter is config delivery.give_up_after (its default when unset).
func (c *Core) giveUpAfter() time.Duration {
	if d := c.cfg().Delivery.GiveUpAfter; d > 0 {
		return d
	}
	return config.DefaultGiveUpAfter
}

// markPosted records that reply id was posted, even while the bridge
// stops (or the next run would post it again); when the disk is full, as
// soon as it has room (recordInOrder).
func (cv *conversation) markPosted(ctx context.Context, id string) {
	st := cv.core.st
	if _, err := cv.recordInOrder(ctx, unrecordedWrite{what: "reply posted", markID: id, do: func(ctx context.Context) error {
		mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markPostedTimeout)
		defer cancel()
		return st.MarkOutboxPosted(mctx, id)
	}}); err != nil {
		cv.log.Error("mark reply posted", "outbox", id, "err", err)
	}
}

// retryOutbox schedules the next flush with exponential backoff: the first
// delay is CoreOptions.OutboxBackoff, doubling up to maxOutboxBackoff.
func (cv *conversation) retryOutbox() {
	if cv.outboxDelay == 0 {
		cv.outboxDelay = cv.core.opts.OutboxBackoff
	} else {
		cv.outboxDelay = min(2*cv.outboxDelay, maxOutboxBackoff)
	}
	cv.outboxRetrying = true
	cv.after(cv.outboxDelay, timerOutbox, "")
}

// lateNote is the line that a reply posted now after failed attempts
// carries: "_(delivered after a Slack outage of 12 min)_", measured from
// its first failed attempt; "" when it has not failed or waited less than
// lateNoteAfter. Only the reply that failed gets it: the replies that
// waited behind it are posted right after it, in the same outage.
func (cv *conversation) lateNote(row store.OutboxMessage) string {
	if row.Attempts == 0 || row.FirstFailedAt.IsZero() {
		return ""
	}
	waited := cv.core.clock.Now().Sub(row.FirstFailedAt)
	if waited < lateNoteAfter {
		return ""
	}
	return fmt.Sprintf("_(delivered after a %s outage of %s)_", cv.platformTitle(), render.FormatOutage(waited))
}

// postReply shows one reply: as the end of the turn's stream when the
// stream shows the answer, as an edit of the turn's live message when the
// reply replaces it and the platform can still edit it, else as a new post.
func (cv *conversation) postReply(ctx context.Context, row store.OutboxMessage) error {
	cv.budget.take(cv.core.clock.Now(), cv.limits.EditInterval, true)
	if se, ok := cv.streamReply[row.ID]; ok {
		delete(cv.streamReply, row.ID) // a retry posts instead
		if err := se.s.Stop(ctx, append(se.last, feedbackChunk(row.ID))); err != nil {
			return fmt.Errorf("stop the stream with the reply: %w", err)
		}
		return nil
	}
	if ref, ok := cv.editReply[row.ID]; ok {
		delete(cv.editReply, row.ID) // a retry posts instead
		if _, err := cv.editOrPost(ctx, ref, bridges.Message{Text: row.Text}, replyMessage(row)); err != nil {
			return fmt.Errorf("edit live message into reply: %w", err)
		}
		return nil
	}
	m := replyMessage(row)
	if note := cv.lateNote(row); note != "" {
		if withNote := m.Text + "\n\n" + note; cv.limits.MaxMessageRunes <= 0 || utf8.RuneCountInString(withNote) <= cv.limits.MaxMessageRunes {
			m.Text = withNote
		} else {
			cv.notice(ctx, note) // no room in the reply: just before it
		}
	}
	if _, err := cv.platform.Post(ctx, bridges.ConversationKey(row.Key), m); err != nil {
		return fmt.Errorf("post reply: %w", err)
	}
	return nil
}

// replyMessage is the post of outbox row: its idempotency key is the row's
// id, and it is a retry when an earlier attempt failed (its response may
// have been lost after the platform accepted it).
func replyMessage(row store.OutboxMessage) bridges.Message {
	return bridges.Message{Text: row.Text, ReplyTo: row.ReplyTo, Idem: row.ID, Retry: row.Attempts > 0}
}

// platformTitle is how people call the conversation's platform.
func (cv *conversation) platformTitle() string {
	return cmp.Or(cv.limits.Title, cv.bot.Platform)
}

// FailedRepliesWindow is how far back OutboxSummary counts replies given
// up.
const FailedRepliesWindow = 24 * time.Hour

// OutboxSummary returns, per bot, the final replies waiting to be posted
// (with the oldest one's time) and those given up within
// FailedRepliesWindow: what /healthz, the metrics and the operator page
// show. Bots with neither are left out.
func (c *Core) OutboxSummary(ctx context.Context) ([]store.OutboxBotSummary, error) {
	out, err := c.st.OutboxSummary(ctx, c.clock.Now().Add(-FailedRepliesWindow))
	if err != nil {
		return nil, fmt.Errorf("replies waiting or failed: %w", err)
	}
	return out, nil
}

// NewOutboxCollector exports the core's OutboxSummary as gauges (see
// metrics.NewOutboxCollector).
func NewOutboxCollector(c *Core) prometheus.Collector {
	return metrics.NewOutboxCollector(c.OutboxSummary, c.clock.Now)
}

// outboxStatusLine is !status's line about the conversation's replies
// waiting to be posted (kept through a platform outage): how many, since
// when (the oldest's first failed attempt, else when it was produced) and
// the last error; "" when none waits.
func (cv *conversation) outboxStatusLine(ctx context.Context) string {
	rows, err := cv.core.st.PendingOutboxForConversation(ctx, cv.id)
	if err != nil {
		cv.log.Warn("read replies waiting for !status", "err", err)
		return "\n• replies waiting to be posted: unknown (the database could not be read)"
	}
	if len(rows) == 0 {
		return ""
	}
	oldest := rows[0]
	since := oldest.CreatedAt
	if !oldest.FirstFailedAt.IsZero() {
		since = oldest.FirstFailedAt
	}
	line := fmt.Sprintf("\n• replies waiting to be posted: %d since %s (%s ago)", len(rows),
		since.UTC().Format("2006-01-02 15:04:05 UTC"), render.RoundAgo(cv.core.clock.Now().Sub(since)))
	if oldest.LastError != "" {
		line += "; last error: " + render.OneLine(oldest.LastError, 200)
	}
	return line
}

// Backoff of retrying the writes a full disk refused (see recordInOrder).
const (
	unrecordedFirstRetry = time.Second
	unrecordedMaxRetry   = 15 * time.Second
)

// unrecordedWrite is a store write of the worker that the database refused
// for want of space (store.IsFull). It is kept in memory and made again,
// in order, once the database can be written.
type unrecordedWrite struct {
	what   string // for logs: "ledger started", "turn's reply", …
	markID string // a ledger or outbox mark: the row it moves ("" otherwise)
	do     func(ctx context.Context) error
}

// recordInOrder makes the store write w, or keeps it for later when the
// database cannot be written now (a full disk) or when earlier writes
// still wait: the worker's ledger marks, turn results, usage, posted marks
// and approval audit entries are then recorded in the order they happened, nothing is lost while the bridge
// runs, and no message whose mark waits is delivered twice
// (deliverPending skips it, see waitsForMark), nor a reply posted twice. It returns whether the
// write was kept for later, and any other error of the write.
func (cv *conversation) recordInOrder(ctx context.Context, w unrecordedWrite) (kept bool, err error) {
	if len(cv.unrecorded) == 0 {
		err := w.do(ctx)
		if !store.IsFull(err) {
			return false, err
		}
		cv.log.Warn("the database cannot be written; keeping the write in memory until it can", "write", w.what, "err", err)
	}
	cv.unrecorded = append(cv.unrecorded, w)
	if !cv.hasTimer(timerDisk, "") {
		cv.unrecordedDelay = unrecordedFirstRetry
		cv.after(cv.unrecordedDelay, timerDisk, "")
	}
	return true, nil
}

// waitsForMark reports whether a mark of ledger message or outbox reply
// id waits in memory: the row has moved on (sent, answered, posted)
// though the database does not say so yet.
func (cv *conversation) waitsForMark(id string) bool {
	for _, w := range cv.unrecorded {
		if w.markID == id {
			return true
		}
	}
	return false
}

// retryUnrecorded makes the kept writes again, oldest first, until one is
// refused again (then it tries later, with backoff up to
// unrecordedMaxRetry) or all are made; then the replies they recorded are
// posted and pending messages delivered. A write failing for another
// reason is logged and dropped: retrying cannot fix it.
func (cv *conversation) retryUnrecorded(ctx context.Context) {
	for len(cv.unrecorded) > 0 {
		w := cv.unrecorded[0]
		err := w.do(ctx)
		if store.IsFull(err) || (err != nil && ctx.Err() != nil) {
			cv.unrecordedDelay = min(2*cv.unrecordedDelay, unrecordedMaxRetry)
			cv.after(cv.unrecordedDelay, timerDisk, "")
			return
		}
		if err != nil && !errors.Is(err, store.ErrBadTransition) && !errors.Is(err, store.ErrAlreadyDecided) {
			cv.log.Error("write kept while the disk was full failed; dropping it", "write", w.what, "err", err)
		}
		cv.unrecorded[0] = unrecordedWrite{}
		cv.unrecorded = cv.unrecorded[1:]
	}
	cv.unrecorded = nil
	cv.log.Info("writes kept while the disk was full are recorded")
	cv.flushOutbox(ctx)
	cv.deliverPending(ctx)
}

// recordOrLog is recordInOrder for a write whose other errors are logged
// as "failed to <what>" with attrs.
func (cv *conversation) recordOrLog(ctx context.Context, what string, do func(ctx context.Context) error, attrs ...any) {
	if _, err := cv.recordInOrder(ctx, unrecordedWrite{what: what, do: do}); err != nil {
		cv.log.Error(what, append(attrs, "err", err)...)
	}
}
