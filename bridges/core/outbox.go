package core

import (
	"context"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// markPostedTimeout bounds recording that a reply was posted, which
// outlives the bridge's stop.
const markPostedTimeout = 10 * time.Second

// flushOutbox posts the conversation's pending replies in order. A reply
// that fails stays pending and is retried with exponential backoff (later
// replies wait, to keep the order); after store.MaxOutboxAttempts failures
// it is marked failed, logged as an error and a short notice is attempted,
// and the next reply goes on.
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
		err := cv.postReply(ctx, row)
		if err == nil {
			// Posted: record it even while the bridge stops, or the next
			// run would post it again.
			mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markPostedTimeout)
			if err := cv.core.st.MarkOutboxPosted(mctx, row.ID); err != nil {
				cv.log.Error("mark reply posted", "outbox", row.ID, "err", err)
			}
			cancel()
			continue
		}
		if ctx.Err() != nil {
			return // stopping: the reply stays pending for the next run
		}
		cv.core.opts.Metrics.outboxFailure(cv.bot.Name)
		upd, merr := cv.core.st.MarkOutboxFailed(ctx, row.ID, err.Error())
		if merr != nil {
			cv.log.Error("record failed reply", "outbox", row.ID, "err", merr)
			cv.retryOutbox()
			return
		}
		if upd.State == store.OutboxFailed {
			cv.log.Error("reply could not be posted; giving up", "outbox", row.ID, "attempts", upd.Attempts, "err", err)
			cv.notice(ctx, fmt.Sprintf("⚠️ A reply of the agent could not be posted after %d attempts (%s). Ask the agent to repeat it if needed.",
				upd.Attempts, oneLine(err.Error(), 120)))
			continue
		}
		cv.log.Warn("post reply failed; will retry", "outbox", row.ID, "attempts", upd.Attempts, "err", err)
		cv.retryOutbox()
		return
	}
	cv.outboxDelay = 0
}

// retryOutbox schedules the next flush with exponential backoff.
func (cv *conversation) retryOutbox() {
	if cv.outboxDelay == 0 {
		cv.outboxDelay = cv.core.opts.OutboxBackoff
	} else {
		cv.outboxDelay = min(2*cv.outboxDelay, maxOutboxBackoff)
	}
	cv.outboxRetrying = true
	cv.after(cv.outboxDelay, timerOutbox, "")
}

// postReply shows one reply: as the end of the turn's stream when the
// stream shows the answer, as an edit of the turn's live message when the
// reply replaces it and the platform can still edit it, else as a new post.
func (cv *conversation) postReply(ctx context.Context, row store.OutboxMessage) error {
	cv.budget.take(cv.core.clock.Now(), cv.limits.EditInterval, true)
	if se, ok := cv.streamReply[row.ID]; ok {
		delete(cv.streamReply, row.ID) // a retry posts instead
		if err := se.s.Stop(ctx, se.last); err != nil {
			return fmt.Errorf("stop the stream with the reply: %w", err)
		}
		return nil
	}
	if ref, ok := cv.editReply[row.ID]; ok {
		delete(cv.editReply, row.ID) // a retry posts instead
		if _, err := cv.editOrPost(ctx, ref, bridges.Message{Text: row.Text}, bridges.Message{Text: row.Text, ReplyTo: row.ReplyTo}); err != nil {
			return fmt.Errorf("edit live message into reply: %w", err)
		}
		return nil
	}
	if _, err := cv.platform.Post(ctx, bridges.ConversationKey(row.Key), bridges.Message{Text: row.Text, ReplyTo: row.ReplyTo}); err != nil {
		return fmt.Errorf("post reply: %w", err)
	}
	return nil
}
