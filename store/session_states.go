package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/store/sqldb"
)

// SessionState is an agent CLI session's files as kept in the database
// (migration 0018): an opaque archive the caller made (bridges/features/replica
// packs the session's files, compressed), so that another replica can
// resume the session without a shared filesystem.
type SessionState struct {
	SessionID      string
	ConversationID string
	Data           []byte
	UpdatedAt      time.Time
}

// PutSessionState stores st, replacing the session's earlier state. With
// a lease (not nil) the write is fenced: it runs under WithLease, so a
// replica that lost the conversation's lease gets ErrLeaseLost and cannot
// overwrite what the new holder stored.
func (s *Store) PutSessionState(ctx context.Context, l *Lease, st SessionState) error {
	if st.SessionID == "" || len(st.Data) == 0 {
		return fmt.Errorf("put session state: session id and data are required")
	}
	put := func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO session_states (session_id, conversation_id, data, size, updated_at)
			VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (session_id) DO UPDATE SET conversation_id = excluded.conversation_id, data = excluded.data,
				size = excluded.size, updated_at = excluded.updated_at`,
			st.SessionID, st.ConversationID, st.Data, len(st.Data), s.db.NowMS())
		return err
	}
	var err error
	if l != nil {
		err = s.WithLease(ctx, *l, put)
	} else {
		err = s.db.WithTx(ctx, put)
	}
	if err != nil {
		return fmt.Errorf("put session state %s: %w", st.SessionID, err)
	}
	return nil
}

// GetSessionState returns the stored state of session id, or ErrNotFound.
func (s *Store) GetSessionState(ctx context.Context, id string) (SessionState, error) {
	st := SessionState{SessionID: id}
	var at int64
	err := s.db.QueryRowContext(ctx, `SELECT conversation_id, data, updated_at FROM session_states WHERE session_id = ?`, id).
		Scan(&st.ConversationID, &st.Data, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return SessionState{}, fmt.Errorf("session state %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return SessionState{}, fmt.Errorf("session state %s: %w", id, err)
	}
	st.UpdatedAt = sqldb.FromMS(at)
	return st, nil
}
