package convstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/store/sqldb"
)

// Rating is a person's 👍 or 👎 on an answer.
type Rating string

// Ratings.
const (
	RatingGood Rating = "good"
	RatingBad  Rating = "bad"
)

// Feedback is one person's rating of one answer (a turn's reply).
type Feedback struct {
	ReplyID        string // outbox id of the rated answer
	ConversationID string
	UserID         string
	Rating         Rating
	UpdatedAt      time.Time // set by the store
}

// RecordFeedback stores f, replacing the person's earlier rating of the
// same answer. It reports whether the stored rating changed (false for
// the same rating again). The answer's conversation must exist.
func (s *Store) RecordFeedback(ctx context.Context, f Feedback) (bool, error) {
	if f.ReplyID == "" || f.ConversationID == "" || f.UserID == "" || (f.Rating != RatingGood && f.Rating != RatingBad) {
		return false, fmt.Errorf("record feedback on %s: %w", f.ReplyID, sqldb.ErrInvalidArgument)
	}
	changed := false
	err := s.db.WithTx(ctx, func(tx *sql.Tx) error {
		now := s.db.NowMS()
		var cur string
		err := tx.QueryRowContext(ctx, `SELECT rating FROM feedback WHERE reply_id = ? AND user_id = ?`, f.ReplyID, f.UserID).Scan(&cur)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			_, err = tx.ExecContext(ctx, `INSERT INTO feedback (reply_id, conversation_id, user_id, rating, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?)`, f.ReplyID, f.ConversationID, f.UserID, f.Rating, now, now)
			changed = err == nil
			return err
		case err != nil:
			return err
		case cur == string(f.Rating):
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE feedback SET rating = ?, updated_at = ? WHERE reply_id = ? AND user_id = ?`,
			f.Rating, now, f.ReplyID, f.UserID)
		changed = err == nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("record feedback on %s: %w", f.ReplyID, err)
	}
	return changed, nil
}

// FeedbackEntry is a rating with the conversation it belongs to.
type FeedbackEntry struct {
	Feedback
	Key ConversationKey
}

// RecentFeedback returns the latest limit ratings of every bot, newest
// first (the operator view).
func (s *Store) RecentFeedback(ctx context.Context, limit int) ([]FeedbackEntry, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT f.reply_id, f.conversation_id, f.user_id, f.rating, f.updated_at, c.bot, c.channel, c.thread
		FROM feedback f JOIN conversations c ON c.id = f.conversation_id
		ORDER BY f.updated_at DESC, f.seq DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("recent feedback: %w", err)
	}
	out, err := sqldb.Collect(rows, func(r sqldb.Scanner) (FeedbackEntry, error) {
		var e FeedbackEntry
		var at int64
		err := r.Scan(&e.ReplyID, &e.ConversationID, &e.UserID, &e.Rating, &at, &e.Key.Bot, &e.Key.Channel, &e.Key.Thread)
		e.UpdatedAt = sqldb.FromMS(at)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("recent feedback: %w", err)
	}
	return out, nil
}
