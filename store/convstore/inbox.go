package convstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/store/sqldb"
	"github.com/google/uuid"
)

// InboxMessage is one inbound chat message in the ledger.
type InboxMessage struct {
	ID             string // uuid; also the stream-json user message uuid
	ConversationID string
	Bot            string
	PlatformMsgID  string // the platform's message id; unique per bot
	UserID         string // the author; for a schedule's firing, its creator when a person made it, else ""
	UserName       string
	Text           string
	// ReplyTo is the platform id of the message this one quotes or replies
	// to ("" = none): a reply quoting a card answers that card only.
	ReplyTo string
	// Quoted is the text of the quoted message, given to the agent marked
	// as quoted ("" = none).
	Quoted     string
	Origin     Origin // who the message comes from; "" is read as OriginPerson when enqueued
	ScheduleID int64  // the schedule of an OriginSchedule message
	Files      []byte // opaque JSON owned by the caller; nil when none
	State      InboxState
	Attempts   int    // times the message was reset for redelivery
	Error      string // why it failed or was cancelled, if known
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

const inboxCols = `id, conversation_id, bot, platform_msg_id, user_id, user_name, text, files, state,
	attempts, error, created_at, updated_at, origin, schedule_id, reply_to, quoted`

func scanInbox(r sqldb.Scanner) (InboxMessage, error) {
	var m InboxMessage
	var created, updated int64
	err := r.Scan(&m.ID, &m.ConversationID, &m.Bot, &m.PlatformMsgID, &m.UserID, &m.UserName, &m.Text, &m.Files,
		&m.State, &m.Attempts, &m.Error, &created, &updated, &m.Origin, &m.ScheduleID, &m.ReplyTo, &m.Quoted)
	if err != nil {
		return InboxMessage{}, err
	}
	m.CreatedAt, m.UpdatedAt = sqldb.FromMS(created), sqldb.FromMS(updated)
	return m, nil
}

// Enqueue durably records an inbound message as pending. The caller sets
// ConversationID (must exist), PlatformMsgID, the author, Text, Files,
// ReplyTo and Quoted; Bot
// may be left empty and is taken from the conversation (a different bot is
// refused). ID may be preset to a uuid; otherwise one is chosen. State,
// Attempts, Error and the timestamps are set by the store.
//
// A message whose (bot, platform message id) is already in the ledger is not
// stored again: Enqueue returns the stored message and duplicate == true.
// Among concurrent calls for the same key exactly one gets duplicate ==
// false. When Enqueue returns nil the message survives a crash, so the
// platform may be acknowledged.
func (s *Store) Enqueue(ctx context.Context, m InboxMessage) (msg InboxMessage, duplicate bool, err error) {
	if m.ConversationID == "" || m.PlatformMsgID == "" {
		return InboxMessage{}, false, fmt.Errorf("enqueue: conversation id and platform message id are required: %w", sqldb.ErrInvalidArgument)
	}
	if m.Origin == "" {
		m.Origin = OriginPerson
	}
	if !m.Origin.valid() {
		return InboxMessage{}, false, fmt.Errorf("enqueue %s: origin %q: %w", m.PlatformMsgID, m.Origin, sqldb.ErrInvalidArgument)
	}
	if m.ID == "" {
		m.ID = uuid.NewString()
	} else if _, err := uuid.Parse(m.ID); err != nil {
		return InboxMessage{}, false, fmt.Errorf("enqueue %s: id is not a uuid: %w", m.PlatformMsgID, sqldb.ErrInvalidArgument)
	}
	err = s.db.WithTxClass(ctx, true, func(tx *sql.Tx) error { // the platform waits for it
		key, err := conversationKeyTx(ctx, tx, m.ConversationID)
		if err != nil {
			return err
		}
		switch m.Bot {
		case "":
			m.Bot = key.Bot
		case key.Bot:
		default:
			return fmt.Errorf("bot %q does not own conversation %s: %w", m.Bot, m.ConversationID, sqldb.ErrInvalidArgument)
		}
		now := s.db.NowMS()
		res, err := tx.ExecContext(ctx, `INSERT INTO inbox
			(id, conversation_id, bot, platform_msg_id, user_id, user_name, text, files, state, created_at, updated_at,
			 origin, schedule_id, reply_to, quoted)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (bot, platform_msg_id) DO NOTHING`,
			m.ID, m.ConversationID, m.Bot, m.PlatformMsgID, m.UserID, m.UserName, m.Text, m.Files,
			InboxPending, now, now, m.Origin, m.ScheduleID, m.ReplyTo, m.Quoted)
		if err != nil {
			return sqldb.InsertErr(err)
		}
		n, err := sqldb.RowsAffected(res)
		if err != nil {
			return err
		}
		duplicate = n == 0
		if !duplicate { // stored as given: no need to read it back
			m.State, m.Attempts, m.Error = InboxPending, 0, ""
			m.CreatedAt, m.UpdatedAt = sqldb.FromMS(now), sqldb.FromMS(now)
			msg = m
			return nil
		}
		msg, err = scanInbox(tx.QueryRowContext(ctx, `SELECT `+inboxCols+` FROM inbox
			WHERE bot = ? AND platform_msg_id = ?`, m.Bot, m.PlatformMsgID))
		if err != nil {
			return fmt.Errorf("read back: %w", err)
		}
		return nil
	})
	if err != nil {
		return InboxMessage{}, false, fmt.Errorf("enqueue message %s: %w", m.PlatformMsgID, err)
	}
	return msg, duplicate, nil
}

// InboxByID returns the inbox message id, or an error wrapping sqldb.ErrNotFound.
func (s *Store) InboxByID(ctx context.Context, id string) (InboxMessage, error) {
	m, err := scanInbox(s.db.QueryRowContext(ctx, `SELECT `+inboxCols+` FROM inbox WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return InboxMessage{}, fmt.Errorf("inbox message %s: %w", id, sqldb.ErrNotFound)
	}
	if err != nil {
		return InboxMessage{}, fmt.Errorf("get inbox message %s: %w", id, err)
	}
	return m, nil
}

// MarkInbox moves inbox message id to state next, storing errText (which may
// be empty) as its error. Allowed moves are those of InboxState.CanMoveTo;
// re-marking the current state changes nothing. A refused move returns an
// error wrapping ErrBadTransition, an unknown id sqldb.ErrNotFound, an unknown
// state sqldb.ErrInvalidArgument.
func (s *Store) MarkInbox(ctx context.Context, id string, next InboxState, errText string) error {
	if !next.Valid() {
		return fmt.Errorf("mark inbox message %s: unknown state %q: %w", id, next, sqldb.ErrInvalidArgument)
	}
	err := s.db.WithTx(ctx, func(tx *sql.Tx) error { return s.markInboxTx(ctx, tx, id, next, errText) })
	if err != nil {
		return fmt.Errorf("mark inbox message %s %s: %w", id, next, err)
	}
	return nil
}

// MarkSent records that inbox message id was written to the agent, in one
// transaction: the move to sent (as MarkInbox) and the activity of its
// conversation (as NoteActivity, with prompt).
func (s *Store) MarkSent(ctx context.Context, id, prompt string) error {
	err := s.db.WithTx(ctx, func(tx *sql.Tx) error {
		if err := s.markInboxTx(ctx, tx, id, InboxSent, ""); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE conversations SET last_active_at = ?,
			summary = CASE WHEN summary = '' THEN ? ELSE summary END
			WHERE id = (SELECT conversation_id FROM inbox WHERE id = ?)`, s.db.NowMS(), Summarize(prompt), id)
		if err != nil {
			return fmt.Errorf("note activity: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("mark inbox message %s sent: %w", id, err)
	}
	return nil
}

// markInboxTx is MarkInbox in tx: one UPDATE when the move is allowed,
// a read of the state only to say why nothing moved.
func (s *Store) markInboxTx(ctx context.Context, tx *sql.Tx, id string, next InboxState, errText string) error {
	if from := next.movableFrom(); len(from) > 0 { // none for pending
		args := []any{next, errText, s.db.NowMS(), id}
		for _, st := range from {
			args = append(args, st)
		}
		res, err := tx.ExecContext(ctx, `UPDATE inbox SET state = ?, error = ?, updated_at = ?
			WHERE id = ? AND state IN (`+placeholders(len(from))+`)`, args...)
		if err != nil {
			return fmt.Errorf("update: %w", err)
		}
		if n, err := sqldb.RowsAffected(res); err != nil || n == 1 {
			return err
		}
	}
	var cur InboxState
	err := tx.QueryRowContext(ctx, `SELECT state FROM inbox WHERE id = ?`, id).Scan(&cur)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return sqldb.ErrNotFound
	case err != nil:
		return fmt.Errorf("read state: %w", err)
	case cur == next:
		return nil
	}
	return fmt.Errorf("%s → %s: %w", cur, next, ErrBadTransition)
}

// ResetForRedelivery moves every sent or started message of conversation
// convID back to pending and counts one more attempt for each, so that they
// are delivered again after the agent process died. It returns how many
// messages were reset (0 for an unknown conversation).
func (s *Store) ResetForRedelivery(ctx context.Context, convID string) (int, error) {
	res, err := s.db.Exec(ctx, false, `UPDATE inbox SET state = ?, attempts = attempts + 1, updated_at = ?
		WHERE conversation_id = ? AND state IN (?, ?)`,
		InboxPending, s.db.NowMS(), convID, InboxSent, InboxStarted)
	if err != nil {
		return 0, fmt.Errorf("reset conversation %s for redelivery: %w", convID, err)
	}
	n, err := sqldb.RowsAffected(res)
	if err != nil {
		return 0, fmt.Errorf("reset conversation %s for redelivery: %w", convID, err)
	}
	if n > 0 {
		s.db.Logger().InfoContext(ctx, "inbox messages reset for redelivery", "conversation", convID, "count", n)
	}
	return int(n), nil
}

// PendingInbox returns the pending messages of conversation convID in the
// order they were enqueued.
func (s *Store) PendingInbox(ctx context.Context, convID string) ([]InboxMessage, error) {
	return s.inboxInStates(ctx, convID, "pending inbox", InboxPending)
}

// UndeliveredInbox returns the messages of conversation convID that are not
// final (pending, sent or started), in the order they were enqueued.
func (s *Store) UndeliveredInbox(ctx context.Context, convID string) ([]InboxMessage, error) {
	return s.inboxInStates(ctx, convID, "undelivered inbox", InboxPending, InboxSent, InboxStarted)
}

func (s *Store) inboxInStates(ctx context.Context, convID, what string, states ...InboxState) ([]InboxMessage, error) {
	args := []any{convID}
	for _, st := range states {
		args = append(args, st)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+inboxCols+` FROM inbox
		WHERE conversation_id = ? AND state IN (`+placeholders(len(states))+`) ORDER BY seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("%s of conversation %s: %w", what, convID, err)
	}
	out, err := sqldb.Collect(rows, scanInbox)
	if err != nil {
		return nil, fmt.Errorf("%s of conversation %s: %w", what, convID, err)
	}
	return out, nil
}

// ConversationsWithUndelivered returns the ids of conversations that have
// pending, sent or started messages, ordered by their oldest such message.
// After a restart these are the conversations to resume.
func (s *Store) ConversationsWithUndelivered(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT conversation_id FROM inbox
		WHERE state IN (?, ?, ?) GROUP BY conversation_id ORDER BY MIN(seq)`,
		InboxPending, InboxSent, InboxStarted)
	if err != nil {
		return nil, fmt.Errorf("conversations with undelivered messages: %w", err)
	}
	ids, err := sqldb.Collect(rows, func(r sqldb.Scanner) (string, error) {
		var id string
		err := r.Scan(&id)
		return id, err
	})
	if err != nil {
		return nil, fmt.Errorf("conversations with undelivered messages: %w", err)
	}
	return ids, nil
}

// placeholders is n comma-separated "?" for an IN list.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}
