package convstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/store/sqldb"
)

// HandoffAction is what a hand-off audit row records.
type HandoffAction string

// Hand-off actions (bridges/features/handoff).
const (
	HandoffAttach  HandoffAction = "attach"  // a terminal attached to a conversation
	HandoffDetach  HandoffAction = "detach"  // it detached
	HandoffExport  HandoffAction = "export"  // a session transcript went to a terminal
	HandoffImport  HandoffAction = "import"  // a terminal's session became a conversation
	HandoffRefused HandoffAction = "refused" // a request was refused; Reason says why
)

// HandoffEvent is one row of the hand-off audit log (table
// handoff_audit): who did what with which conversation, when, from where.
// It never holds a token.
type HandoffEvent struct {
	At             time.Time // set by the store
	Action         HandoffAction
	Request        string // what was asked: attach, export, import, send, decide
	Person         string // the handoff.users name; "" when the token was missing or unknown
	UserID         string // the platform user id they act as on the bot ("" when not known yet)
	ConversationID string // "" when the request named none or an unknown one
	Key            ConversationKey
	Reason         string // why it was refused
	Remote         string // the client's address
}

// RecordHandoff appends e to the hand-off audit log, stamped with the
// store's clock. Action and Request are required.
func (s *Store) RecordHandoff(ctx context.Context, e HandoffEvent) error {
	switch e.Action {
	case HandoffAttach, HandoffDetach, HandoffExport, HandoffImport, HandoffRefused:
	default:
		return fmt.Errorf("record handoff %q: unknown action: %w", e.Action, sqldb.ErrInvalidArgument)
	}
	if e.Request == "" {
		return fmt.Errorf("record handoff %s: request is required: %w", e.Action, sqldb.ErrInvalidArgument)
	}
	err := s.db.WithTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO handoff_audit
			(at, action, request, person, user_id, conversation_id, bot, channel, thread, reason, remote)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			s.db.NowMS(), e.Action, e.Request, e.Person, e.UserID, e.ConversationID,
			e.Key.Bot, e.Key.Channel, e.Key.Thread, e.Reason, e.Remote)
		return err
	})
	if err != nil {
		return fmt.Errorf("record handoff %s: %w", e.Action, err)
	}
	return nil
}

// HandoffAudit returns the latest limit rows of the hand-off audit log,
// newest first (the operator view).
func (s *Store) HandoffAudit(ctx context.Context, limit int) ([]HandoffEvent, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT at, action, request, person, user_id, conversation_id, bot, channel, thread, reason, remote
		FROM handoff_audit ORDER BY at DESC, seq DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("handoff audit: %w", err)
	}
	out, err := sqldb.Collect(rows, func(r sqldb.Scanner) (HandoffEvent, error) {
		var e HandoffEvent
		var at int64
		err := r.Scan(&at, &e.Action, &e.Request, &e.Person, &e.UserID, &e.ConversationID,
			&e.Key.Bot, &e.Key.Channel, &e.Key.Thread, &e.Reason, &e.Remote)
		e.At = sqldb.FromMS(at)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("handoff audit: %w", err)
	}
	return out, nil
}
