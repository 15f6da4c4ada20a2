package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/store"
)

// FeedbackStore is what recording a rating reads and writes
// (*store.Store implements it).
type FeedbackStore interface {
	OutboxByID(ctx context.Context, id string) (store.OutboxMessage, error)
	RecordFeedback(ctx context.Context, f store.Feedback) (bool, error)
}

var _ FeedbackStore = (*store.Store)(nil)

// Feedback records the ratings of the answers the outbox posted with
// feedback buttons (FeedbackChunk).
type Feedback struct {
	Store FeedbackStore
	// Allowed reports whether user may talk to the bot at key.
	Allowed func(key bridges.ConversationKey, user string) bool
	Metrics *metrics.Metrics
	Log     *slog.Logger
}

// Record records a 👍/👎 click on an answer's feedback buttons. Anyone
// allowed to talk to the bot in the conversation may rate its answers
// (Allowed, as for writing there); the rated answer must be a reply of
// that very conversation. A person's second click replaces their first.
// The clicker hears back privately only when the click is refused.
func (f Feedback) Record(ctx context.Context, a bridges.Action) error {
	replyID := strings.TrimPrefix(a.CardID, FeedbackPrefix)
	rating := store.Rating(a.Choice)
	if !f.Allowed(a.Key, a.UserID) {
		f.Log.Info("feedback refused: not allowed in the conversation", "key", a.Key, "user", a.UserID)
		replyPrivately(ctx, f.Log, a, "Sorry, you cannot rate answers here.")
		return nil
	}
	if rating != store.RatingGood && rating != store.RatingBad {
		f.Log.Warn("feedback ignored: not a rating", "reply", replyID, "choice", a.Choice, "user", a.UserID)
		return nil
	}
	row, err := f.Store.OutboxByID(ctx, replyID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		replyPrivately(ctx, f.Log, a, "This answer is too old to rate.")
		return nil
	case err != nil:
		return fmt.Errorf("feedback on %s: %w", replyID, err)
	case bridges.ConversationKey(row.Key) != a.Key:
		f.Log.Warn("feedback refused: the answer is not this conversation's", "key", a.Key, "reply", replyID, "user", a.UserID)
		return nil
	}
	changed, err := f.Store.RecordFeedback(ctx, store.Feedback{ReplyID: replyID, ConversationID: row.ConversationID, UserID: a.UserID, Rating: rating})
	if err != nil {
		replyPrivately(ctx, f.Log, a, "The bridge could not record your feedback; please try again later.")
		return fmt.Errorf("feedback on %s: %w", replyID, err)
	}
	if changed {
		f.Metrics.Feedback(a.Key.Bot, string(rating))
		f.Log.Info("answer rated", "key", a.Key, "reply", replyID, "rating", rating, "user", a.UserID)
	}
	return nil
}

// replyPrivately answers the clicker of a through Action.Reply, if the
// platform offers it.
func replyPrivately(ctx context.Context, log *slog.Logger, a bridges.Action, text string) {
	if a.Reply == nil {
		return
	}
	if err := a.Reply(ctx, text); err != nil {
		log.Warn("private reply to a click failed", "key", a.Key, "user", a.UserID, "err", err)
	}
}

// ReplyPrivately answers a clicker through Action.Reply, if the platform
// offers it.
func ReplyPrivately(ctx context.Context, log *slog.Logger, a bridges.Action, text string) {
	if a.Reply == nil {
		return
	}
	if err := a.Reply(ctx, text); err != nil {
		log.Warn("private reply to a click failed", "key", a.Key, "user", a.UserID, "err", err)
	}
}
