package convstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/store/sqldb"
	"github.com/google/uuid"
)

// OutboxState is the state of a final reply waiting to be posted.
type OutboxState string

// Outbox states.
const (
	OutboxPending OutboxState = "pending" // to be posted (again)
	OutboxPosted  OutboxState = "posted"  // on the platform; final
	OutboxFailed  OutboxState = "failed"  // given up (MarkOutboxFailed); final
)

// OutboxMessage is one final reply.
type OutboxMessage struct {
	ID             string
	ConversationID string
	Key            ConversationKey // where to post
	Text           string
	ReplyTo        string // platform id of the inbound message the reply quotes, or ""
	State          OutboxState
	Attempts       int    // failed post attempts
	LastError      string // error of the last failed attempt
	CreatedAt      time.Time
	UpdatedAt      time.Time
	FirstFailedAt  time.Time // when the first attempt failed; zero = none did
}

const outboxCols = `id, conversation_id, bot, channel, thread, text, reply_to, state, attempts, last_error, created_at, updated_at, first_failed_at`

func scanOutbox(r sqldb.Scanner) (OutboxMessage, error) {
	var m OutboxMessage
	var created, updated, firstFailed int64
	err := r.Scan(&m.ID, &m.ConversationID, &m.Key.Bot, &m.Key.Channel, &m.Key.Thread, &m.Text, &m.ReplyTo, &m.State,
		&m.Attempts, &m.LastError, &created, &updated, &firstFailed)
	if err != nil {
		return OutboxMessage{}, err
	}
	m.CreatedAt, m.UpdatedAt = sqldb.FromMS(created), sqldb.FromMS(updated)
	if firstFailed != 0 {
		m.FirstFailedAt = sqldb.FromMS(firstFailed)
	}
	return m, nil
}

// AddOutbox durably stores a reply as pending and returns it as stored. The
// caller sets ConversationID (must exist), Text, optionally ReplyTo, and Key when the reply
// goes somewhere other than the conversation's own key (a zero Key means the
// conversation's). ID is chosen if empty; the rest is set by the store.
func (s *Store) AddOutbox(ctx context.Context, m OutboxMessage) (OutboxMessage, error) {
	if m.ConversationID == "" {
		return OutboxMessage{}, fmt.Errorf("add outbox: conversation id is required: %w", sqldb.ErrInvalidArgument)
	}
	var out OutboxMessage
	err := s.db.WithTx(ctx, func(tx *sql.Tx) error {
		key, err := conversationKeyTx(ctx, tx, m.ConversationID)
		if err != nil {
			return err
		}
		out, err = s.addOutboxTx(ctx, tx, m, key)
		return err
	})
	if err != nil {
		return OutboxMessage{}, fmt.Errorf("add outbox reply to conversation %s: %w", m.ConversationID, err)
	}
	return out, nil
}

// InboxMark is a move of ledger message ID to State (see MarkInbox) with
// Why as its error text, recorded with other writes (EndTurn).
type InboxMark struct {
	ID    string
	State InboxState
	Why   string
}

// EndTurn records the end of one agent turn in a single transaction (one
// commit before the reply can be posted): its usage (AddUsage), the parts
// of its reply as pending outbox messages (AddOutbox), returned as stored,
// and the final states of the ledger messages the turn handled (marks), so
// that a reply is never recorded without its messages being finished, nor
// the other way round. A mark the state machine refuses (the message is
// already final) leaves the message as it is. Every reply must belong to
// u.ConversationID.
func (s *Store) EndTurn(ctx context.Context, u Usage, replies []OutboxMessage, marks ...InboxMark) ([]OutboxMessage, error) {
	if u.ConversationID == "" {
		return nil, fmt.Errorf("end turn: conversation id is required: %w", sqldb.ErrInvalidArgument)
	}
	for _, m := range marks {
		if !m.State.Final() {
			return nil, fmt.Errorf("end turn: ledger message %s to %q: not a final state: %w", m.ID, m.State, sqldb.ErrInvalidArgument)
		}
	}
	out := make([]OutboxMessage, 0, len(replies))
	err := s.db.WithTx(ctx, func(tx *sql.Tx) error {
		key, err := conversationKeyTx(ctx, tx, u.ConversationID)
		if err != nil {
			return err
		}
		if err := s.addUsageTx(ctx, tx, u, key.Bot); err != nil {
			return err
		}
		for _, m := range replies {
			if m.ConversationID != u.ConversationID {
				return fmt.Errorf("reply for conversation %q: %w", m.ConversationID, sqldb.ErrInvalidArgument)
			}
			row, err := s.addOutboxTx(ctx, tx, m, key)
			if err != nil {
				return err
			}
			out = append(out, row)
		}
		for _, m := range marks {
			if err := s.markInboxTx(ctx, tx, m.ID, m.State, m.Why); err != nil && !errors.Is(err, ErrBadTransition) {
				return fmt.Errorf("mark inbox message %s %s: %w", m.ID, m.State, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("end turn of conversation %s: %w", u.ConversationID, err)
	}
	return out, nil
}

// addOutboxTx inserts m (see AddOutbox) of the conversation whose key is
// convKey in tx and returns it as stored.
func (s *Store) addOutboxTx(ctx context.Context, tx *sql.Tx, m OutboxMessage, convKey ConversationKey) (OutboxMessage, error) {
	if m.ID == "" {
		m.ID = uuid.NewString()
	}
	if m.Key == (ConversationKey{}) {
		m.Key = convKey
	}
	now := s.db.NowMS()
	_, err := tx.ExecContext(ctx, `INSERT INTO outbox
		(id, conversation_id, bot, channel, thread, text, reply_to, state, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.ID, m.ConversationID, m.Key.Bot, m.Key.Channel, m.Key.Thread, m.Text, m.ReplyTo, OutboxPending, now, now)
	if err != nil {
		return OutboxMessage{}, sqldb.InsertErr(err)
	}
	// Stored as given (no need to read it back), with the store's fields.
	m.State, m.Attempts, m.LastError = OutboxPending, 0, ""
	m.CreatedAt, m.UpdatedAt, m.FirstFailedAt = sqldb.FromMS(now), sqldb.FromMS(now), time.Time{}
	return m, nil
}

// OutboxByID returns the outbox message id, or an error wrapping sqldb.ErrNotFound.
func (s *Store) OutboxByID(ctx context.Context, id string) (OutboxMessage, error) {
	m, err := scanOutbox(s.db.QueryRowContext(ctx, `SELECT `+outboxCols+` FROM outbox WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return OutboxMessage{}, fmt.Errorf("outbox message %s: %w", id, sqldb.ErrNotFound)
	}
	if err != nil {
		return OutboxMessage{}, fmt.Errorf("get outbox message %s: %w", id, err)
	}
	return m, nil
}

// MarkOutboxPosted marks reply id posted. Marking a posted reply again is a
// no-op; a failed reply cannot become posted (ErrBadTransition).
func (s *Store) MarkOutboxPosted(ctx context.Context, id string) error {
	err := s.db.WithTx(ctx, func(tx *sql.Tx) error {
		// One UPDATE when the reply is pending (always, but for a retry);
		// its state is read only to say why nothing moved.
		res, err := tx.ExecContext(ctx, `UPDATE outbox SET state = ?, updated_at = ? WHERE id = ? AND state = ?`,
			OutboxPosted, s.db.NowMS(), id, OutboxPending)
		if err != nil {
			return err
		}
		if n, err := sqldb.RowsAffected(res); err != nil || n == 1 {
			return err
		}
		cur, err := outboxStateTx(ctx, tx, id)
		switch {
		case err != nil:
			return err
		case cur == OutboxPosted:
			return nil
		default:
			return fmt.Errorf("%s → %s: %w", cur, OutboxPosted, ErrBadTransition)
		}
	})
	if err != nil {
		return fmt.Errorf("mark outbox message %s posted: %w", id, err)
	}
	return nil
}

// MarkOutboxRetry records a failed attempt to post pending reply id that
// will be tried again: it counts the attempt, stores errText and, on the
// first failure, sets FirstFailedAt. The reply stays pending; the caller
// decides when to give up (MarkOutboxFailed). It returns the reply as
// updated. A reply that is no longer pending returns ErrBadTransition.
func (s *Store) MarkOutboxRetry(ctx context.Context, id, errText string) (OutboxMessage, error) {
	out, err := s.markOutboxAttempt(ctx, id, errText, OutboxPending)
	if err != nil {
		return OutboxMessage{}, fmt.Errorf("mark outbox message %s for retry: %w", id, err)
	}
	return out, nil
}

// MarkOutboxFailed records the last failed attempt to post pending reply
// id: it counts the attempt, stores errText and marks the reply failed
// (final; PendingOutbox no longer returns it). It returns the reply as
// updated. A reply that is no longer pending returns ErrBadTransition.
func (s *Store) MarkOutboxFailed(ctx context.Context, id, errText string) (OutboxMessage, error) {
	out, err := s.markOutboxAttempt(ctx, id, errText, OutboxFailed)
	if err != nil {
		return OutboxMessage{}, fmt.Errorf("mark outbox message %s failed: %w", id, err)
	}
	return out, nil
}

// markOutboxAttempt counts a failed attempt of pending reply id and moves
// it to state (pending: stays; failed: given up).
func (s *Store) markOutboxAttempt(ctx context.Context, id, errText string, state OutboxState) (OutboxMessage, error) {
	var out OutboxMessage
	err := s.db.WithTx(ctx, func(tx *sql.Tx) error {
		cur, err := outboxStateTx(ctx, tx, id)
		if err != nil {
			return err
		}
		if cur != OutboxPending {
			return fmt.Errorf("%s → %s: %w", cur, state, ErrBadTransition)
		}
		now := s.db.NowMS()
		_, err = tx.ExecContext(ctx, `UPDATE outbox SET attempts = attempts + 1, last_error = ?, updated_at = ?, state = ?,
			first_failed_at = CASE WHEN first_failed_at = 0 THEN ? ELSE first_failed_at END
			WHERE id = ?`, errText, now, state, now, id)
		if err != nil {
			return fmt.Errorf("update: %w", err)
		}
		out, err = scanOutbox(tx.QueryRowContext(ctx, `SELECT `+outboxCols+` FROM outbox WHERE id = ?`, id))
		if err != nil {
			return fmt.Errorf("read back: %w", err)
		}
		return nil
	})
	return out, err
}

func outboxStateTx(ctx context.Context, tx *sql.Tx, id string) (OutboxState, error) {
	var cur OutboxState
	err := tx.QueryRowContext(ctx, `SELECT state FROM outbox WHERE id = ?`, id).Scan(&cur)
	if errors.Is(err, sql.ErrNoRows) {
		return "", sqldb.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("read state: %w", err)
	}
	return cur, nil
}

// PendingOutbox returns every pending reply, oldest first.
func (s *Store) PendingOutbox(ctx context.Context) ([]OutboxMessage, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+outboxCols+` FROM outbox WHERE state = ? ORDER BY seq`, OutboxPending)
	if err != nil {
		return nil, fmt.Errorf("pending outbox: %w", err)
	}
	out, err := sqldb.Collect(rows, scanOutbox)
	if err != nil {
		return nil, fmt.Errorf("pending outbox: %w", err)
	}
	return out, nil
}

// PendingOutboxForConversation returns the pending replies of conversation
// convID, oldest first.
func (s *Store) PendingOutboxForConversation(ctx context.Context, convID string) ([]OutboxMessage, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+outboxCols+` FROM outbox
		WHERE state = ? AND conversation_id = ? ORDER BY seq`, OutboxPending, convID)
	if err != nil {
		return nil, fmt.Errorf("pending outbox of conversation %s: %w", convID, err)
	}
	out, err := sqldb.Collect(rows, scanOutbox)
	if err != nil {
		return nil, fmt.Errorf("pending outbox of conversation %s: %w", convID, err)
	}
	return out, nil
}

// OutboxBotSummary counts one bot's replies that wait to be posted or were
// given up (OutboxSummary).
type OutboxBotSummary struct {
	Bot           string
	Waiting       int       // pending replies
	OldestWaiting time.Time // when the oldest pending reply was stored; zero when none
	Failed        int       // replies given up since the time asked for
}

// OutboxSummary returns, per bot (sorted by name), how many replies are
// pending and how many were given up (failed) at or after since. Bots with
// neither are left out.
func (s *Store) OutboxSummary(ctx context.Context, since time.Time) ([]OutboxBotSummary, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT bot,
			COALESCE(SUM(CASE WHEN state = ? THEN 1 ELSE 0 END), 0),
			COALESCE(MIN(CASE WHEN state = ? THEN created_at END), 0),
			COALESCE(SUM(CASE WHEN state = ? THEN 1 ELSE 0 END), 0)
		FROM outbox WHERE state = ? OR (state = ? AND updated_at >= ?)
		GROUP BY bot ORDER BY bot`,
		OutboxPending, OutboxPending, OutboxFailed, OutboxPending, OutboxFailed, since.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("outbox summary: %w", err)
	}
	out, err := sqldb.Collect(rows, func(r sqldb.Scanner) (OutboxBotSummary, error) {
		var b OutboxBotSummary
		var oldest int64
		if err := r.Scan(&b.Bot, &b.Waiting, &oldest, &b.Failed); err != nil {
			return OutboxBotSummary{}, err
		}
		if oldest != 0 {
			b.OldestWaiting = sqldb.FromMS(oldest)
		}
		return b, nil
	})
	if err != nil {
		return nil, fmt.Errorf("outbox summary: %w", err)
	}
	return out, nil
}
