package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/store/sqldb"
)

// OpenStream is the message a conversation's turn streams into (migration
// 0021), recorded when the stream starts: whoever answers the
// conversation next closes it if the turn was cut off.
type OpenStream struct {
	ConversationID string
	Channel        string
	Thread         string
	MessageID      string
	StartedAt      time.Time
	// ReplyID is the outbox reply the message is to become (the turn's
	// live message edited into its answer, migration 0022), or "".
	ReplyID string
}

// PutOpenStream records os as its conversation's latest stream, replacing
// the earlier one. Through a Fenced view the write is fenced.
func (s *Store) PutOpenStream(ctx context.Context, os OpenStream) error {
	if os.ConversationID == "" || os.MessageID == "" {
		return fmt.Errorf("put open stream: conversation and message are required: %w", sqldb.ErrInvalidArgument)
	}
	err := s.db.WithTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO open_streams (conversation_id, channel, thread, message_id, started_at, reply_id)
			VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (conversation_id) DO UPDATE SET channel = excluded.channel, thread = excluded.thread,
				message_id = excluded.message_id, started_at = excluded.started_at, reply_id = excluded.reply_id`,
			os.ConversationID, os.Channel, os.Thread, os.MessageID, s.db.NowMS(), os.ReplyID)
		return err
	})
	if err != nil {
		return fmt.Errorf("put open stream of %s: %w", os.ConversationID, err)
	}
	return nil
}

// OpenStreamOf returns conversation id's recorded stream, or ErrNotFound.
func (s *Store) OpenStreamOf(ctx context.Context, id string) (OpenStream, error) {
	os := OpenStream{ConversationID: id}
	var at int64
	err := s.db.QueryRowContext(ctx, `SELECT channel, thread, message_id, started_at, reply_id FROM open_streams WHERE conversation_id = ?`, id).
		Scan(&os.Channel, &os.Thread, &os.MessageID, &at, &os.ReplyID)
	if errors.Is(err, sql.ErrNoRows) {
		return OpenStream{}, fmt.Errorf("open stream of %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return OpenStream{}, fmt.Errorf("open stream of %s: %w", id, err)
	}
	os.StartedAt = sqldb.FromMS(at)
	return os, nil
}

// DeleteOpenStream forgets conversation id's stream if it is still
// message (a later stream's record stays). Through a Fenced view the
// write is fenced.
func (s *Store) DeleteOpenStream(ctx context.Context, id, message string) error {
	err := s.db.WithTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM open_streams WHERE conversation_id = ? AND message_id = ?`, id, message)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete open stream of %s: %w", id, err)
	}
	return nil
}

// ConversationsWithOpenStreams lists the conversations with a recorded
// stream (start-up recovery closes them).
func (s *Store) ConversationsWithOpenStreams(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT conversation_id FROM open_streams ORDER BY conversation_id`)
	if err != nil {
		return nil, fmt.Errorf("conversations with open streams: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("conversations with open streams: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
