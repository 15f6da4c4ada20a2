package convstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/store/sqldb"
)

// Decision is how a permission request ended. The column is free text; these
// are the values the bridge writes.
type Decision string

// Decisions.
const (
	DecisionAllow     Decision = "allow"      // allowed once by a person
	DecisionAlways    Decision = "always"     // allowed with the CLI's permission suggestions
	DecisionDeny      Decision = "deny"       // denied by a person
	DecisionTimeout   Decision = "timeout"    // approval_timeout elapsed; denied
	DecisionCancelled Decision = "cancelled"  // the CLI withdrew the request (control_cancel_request)
	DecisionRuleAllow Decision = "rule-allow" // a policy rule allowed it, no card
	DecisionRuleDeny  Decision = "rule-deny"  // a policy rule denied it, no card
	DecisionGrant     Decision = "grant"      // an "Always allow" grant of the conversation allowed it, no card
	DecisionExpired   Decision = "expired"    // closed by a process exit or bridge restart
)

// Approval is one permission request and, once decided, its decision.
type Approval struct {
	ID             string // the CLI's can_use_tool request id
	ConversationID string
	ToolName       string
	Input          []byte // the tool input JSON as received
	RequestedBy    string // user whose message started the turn
	CardRef        string // opaque platform reference of the card, '' if none
	CardMsgID      string // platform id of the message showing the card, '' if none
	Decision       Decision
	DecidedBy      string
	Message        string // message sent with the decision (e.g. the deny reason)
	RequestedAt    time.Time
	DecidedAt      time.Time // zero while open
}

// Open reports whether the request has no decision yet.
func (a Approval) Open() bool { return a.DecidedAt.IsZero() }

const approvalCols = `id, conversation_id, tool_name, input, requested_by, card_ref, decision, decided_by, message,
	requested_at, decided_at, card_msg_id`

func scanApproval(r sqldb.Scanner) (Approval, error) {
	var a Approval
	var requested int64
	var decided sql.NullInt64
	err := r.Scan(&a.ID, &a.ConversationID, &a.ToolName, &a.Input, &a.RequestedBy, &a.CardRef, &a.Decision,
		&a.DecidedBy, &a.Message, &requested, &decided, &a.CardMsgID)
	if err != nil {
		return Approval{}, err
	}
	a.RequestedAt = sqldb.FromMS(requested)
	if decided.Valid {
		a.DecidedAt = sqldb.FromMS(decided.Int64)
	}
	return a, nil
}

// RecordApprovalRequest stores an open permission request and returns it as
// stored. The caller sets ID (the request id), ConversationID (must exist),
// ToolName, Input, RequestedBy and optionally CardRef; decision fields are
// ignored and RequestedAt is set by the store. An id already recorded returns
// sqldb.ErrDuplicate.
func (s *Store) RecordApprovalRequest(ctx context.Context, a Approval) (Approval, error) {
	if a.ID == "" || a.ConversationID == "" || a.ToolName == "" {
		return Approval{}, fmt.Errorf("record approval request: id, conversation id and tool name are required: %w", sqldb.ErrInvalidArgument)
	}
	var out Approval
	err := s.db.WithTx(ctx, func(tx *sql.Tx) error {
		if _, err := conversationKeyTx(ctx, tx, a.ConversationID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO approvals
			(id, conversation_id, tool_name, input, requested_by, card_ref, requested_at)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			a.ID, a.ConversationID, a.ToolName, a.Input, a.RequestedBy, a.CardRef, s.db.NowMS())
		if err != nil {
			return fmt.Errorf("insert: %w", err)
		}
		n, err := sqldb.RowsAffected(res)
		if err != nil {
			return err
		}
		if n == 0 {
			return sqldb.ErrDuplicate
		}
		out, err = scanApproval(tx.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = ?`, a.ID))
		if err != nil {
			return fmt.Errorf("read back: %w", err)
		}
		return nil
	})
	if err != nil {
		return Approval{}, fmt.Errorf("record approval request %s (%s): %w", a.ID, a.ToolName, err)
	}
	return out, nil
}

// SetApprovalCardRef stores the platform reference of the card showing
// request id, so it can be closed later (e.g. after a restart), and the
// platform id of its message (msgID, may be ""), so that a reply quoting
// it finds it (ApprovalByCardMessage).
func (s *Store) SetApprovalCardRef(ctx context.Context, id, cardRef, msgID string) error {
	res, err := s.db.Exec(ctx, false, `UPDATE approvals SET card_ref = ?, card_msg_id = ? WHERE id = ?`, cardRef, msgID, id)
	if err != nil {
		return fmt.Errorf("set card of approval %s: %w", id, err)
	}
	n, err := sqldb.RowsAffected(res)
	if err != nil {
		return fmt.Errorf("set card of approval %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("set card of approval %s: %w", id, sqldb.ErrNotFound)
	}
	return nil
}

// ApprovalByCardMessage returns the request of conversation convID whose
// card is the platform message msgID (the newest, should a platform reuse
// ids), decided or not, or an error wrapping sqldb.ErrNotFound.
func (s *Store) ApprovalByCardMessage(ctx context.Context, convID, msgID string) (Approval, error) {
	if msgID == "" {
		return Approval{}, fmt.Errorf("approval of card message %q: %w", msgID, sqldb.ErrNotFound)
	}
	a, err := scanApproval(s.db.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM approvals
		WHERE conversation_id = ? AND card_msg_id = ? ORDER BY seq DESC LIMIT 1`, convID, msgID))
	if errors.Is(err, sql.ErrNoRows) {
		return Approval{}, fmt.Errorf("approval of card message %s: %w", msgID, sqldb.ErrNotFound)
	}
	if err != nil {
		return Approval{}, fmt.Errorf("approval of card message %s: %w", msgID, err)
	}
	return a, nil
}

// RecordApprovalDecision decides open request id now and returns it as
// updated. Only the first decision counts: a decided request returns an
// error wrapping ErrAlreadyDecided (the stored decision is unchanged), an
// unknown id sqldb.ErrNotFound, an empty decision sqldb.ErrInvalidArgument.
func (s *Store) RecordApprovalDecision(ctx context.Context, id string, d Decision, decidedBy, message string) (Approval, error) {
	if d == "" {
		return Approval{}, fmt.Errorf("record decision of approval %s: empty decision: %w", id, sqldb.ErrInvalidArgument)
	}
	var out Approval
	err := s.db.WithTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE approvals SET decision = ?, decided_by = ?, message = ?, decided_at = ?
			WHERE id = ? AND decided_at IS NULL`, d, decidedBy, message, s.db.NowMS(), id)
		if err != nil {
			return fmt.Errorf("update: %w", err)
		}
		n, err := sqldb.RowsAffected(res)
		if err != nil {
			return err
		}
		out, err = scanApproval(tx.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return sqldb.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("read back: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("decided %s by %q: %w", out.Decision, out.DecidedBy, ErrAlreadyDecided)
		}
		return nil
	})
	if err != nil {
		return Approval{}, fmt.Errorf("record decision %s of approval %s: %w", d, id, err)
	}
	return out, nil
}

// OpenApprovals returns every undecided request, oldest first: after a
// restart their cards are closed and they are recorded as expired.
func (s *Store) OpenApprovals(ctx context.Context) ([]Approval, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+approvalCols+` FROM approvals WHERE decided_at IS NULL ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("open approvals: %w", err)
	}
	out, err := sqldb.Collect(rows, scanApproval)
	if err != nil {
		return nil, fmt.Errorf("open approvals: %w", err)
	}
	return out, nil
}

// ApprovalsForConversation returns the requests of conversation convID,
// decided or not, oldest first.
func (s *Store) ApprovalsForConversation(ctx context.Context, convID string) ([]Approval, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+approvalCols+` FROM approvals WHERE conversation_id = ? ORDER BY seq`, convID)
	if err != nil {
		return nil, fmt.Errorf("approvals of conversation %s: %w", convID, err)
	}
	out, err := sqldb.Collect(rows, scanApproval)
	if err != nil {
		return nil, fmt.Errorf("approvals of conversation %s: %w", convID, err)
	}
	return out, nil
}
