package convstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/store/sqldb"
)

// Grant is an "Always allow" rule of one conversation: requests of that
// conversation for Tool whose subject matches Match are allowed without a
// card while the grant is active.
type Grant struct {
	ID             int64  // chosen by the store
	ConversationID string // the conversation it applies to
	Num            int    // 1, 2, 3 … within the conversation, never reused; what !rules shows
	Tool           string // tool name, e.g. "Bash"
	Match          string // the rule's glob over the request's subject; "" = any subject
	GrantedBy      string // user who clicked "Always allow"
	ApprovalID     string // the approval request the click decided
	CreatedAt      time.Time
	RemovedAt      time.Time // zero while active
	RemovedBy      string
}

// Active reports whether the grant still applies.
func (g Grant) Active() bool { return g.RemovedAt.IsZero() }

const grantCols = `id, conversation_id, num, tool, pattern, granted_by, approval_id, created_at, removed_at, removed_by`

func scanGrant(r sqldb.Scanner) (Grant, error) {
	var g Grant
	var created int64
	var removed sql.NullInt64
	err := r.Scan(&g.ID, &g.ConversationID, &g.Num, &g.Tool, &g.Match, &g.GrantedBy, &g.ApprovalID, &created, &removed, &g.RemovedBy)
	if err != nil {
		return Grant{}, err
	}
	g.CreatedAt = sqldb.FromMS(created)
	if removed.Valid {
		g.RemovedAt = sqldb.FromMS(removed.Int64)
	}
	return g, nil
}

// AddGrants stores grants for conversation convID in one transaction and
// returns them as stored, in order. The caller sets Tool (required), Match,
// GrantedBy and ApprovalID of each; the store sets ID, ConversationID, Num
// and CreatedAt. A grant equal (same Tool and Match) to an active grant of
// the conversation is not stored again: the active one is returned in its
// place. An unknown conversation returns sqldb.ErrNotFound, an empty Tool
// sqldb.ErrInvalidArgument; either stores nothing.
func (s *Store) AddGrants(ctx context.Context, convID string, gs []Grant) ([]Grant, error) {
	for _, g := range gs {
		if g.Tool == "" {
			return nil, fmt.Errorf("add grants to conversation %s: tool is required: %w", convID, sqldb.ErrInvalidArgument)
		}
	}
	out := make([]Grant, 0, len(gs))
	err := s.db.WithTx(ctx, func(tx *sql.Tx) error {
		if _, err := conversationKeyTx(ctx, tx, convID); err != nil {
			return err
		}
		for _, g := range gs {
			existing, err := scanGrant(tx.QueryRowContext(ctx, `SELECT `+grantCols+` FROM grants
				WHERE conversation_id = ? AND tool = ? AND pattern = ? AND removed_at IS NULL
				ORDER BY num LIMIT 1`, convID, g.Tool, g.Match))
			switch {
			case err == nil:
				out = append(out, existing)
				continue
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("look up %s %q: %w", g.Tool, g.Match, err)
			}
			var id int64
			err = tx.QueryRowContext(ctx, `INSERT INTO grants
				(conversation_id, num, tool, pattern, granted_by, approval_id, created_at)
				VALUES (?, (SELECT COALESCE(MAX(num), 0) + 1 FROM grants WHERE conversation_id = ?), ?, ?, ?, ?, ?)
				RETURNING id`,
				convID, convID, g.Tool, g.Match, g.GrantedBy, g.ApprovalID, s.db.NowMS()).Scan(&id)
			if err != nil {
				return sqldb.InsertErr(err)
			}
			stored, err := scanGrant(tx.QueryRowContext(ctx, `SELECT `+grantCols+` FROM grants WHERE id = ?`, id))
			if err != nil {
				return fmt.Errorf("read back: %w", err)
			}
			out = append(out, stored)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("add grants to conversation %s: %w", convID, err)
	}
	return out, nil
}

// ActiveGrants returns the active grants of conversation convID ordered by
// Num (nil when there are none).
func (s *Store) ActiveGrants(ctx context.Context, convID string) ([]Grant, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+grantCols+` FROM grants
		WHERE conversation_id = ? AND removed_at IS NULL ORDER BY num`, convID)
	if err != nil {
		return nil, fmt.Errorf("active grants of conversation %s: %w", convID, err)
	}
	out, err := sqldb.Collect(rows, scanGrant)
	if err != nil {
		return nil, fmt.Errorf("active grants of conversation %s: %w", convID, err)
	}
	return out, nil
}

// GrantsForConversation returns every grant of conversation convID, removed
// ones included, ordered by Num: the audit of what was granted and removed.
func (s *Store) GrantsForConversation(ctx context.Context, convID string) ([]Grant, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+grantCols+` FROM grants WHERE conversation_id = ? ORDER BY num`, convID)
	if err != nil {
		return nil, fmt.Errorf("grants of conversation %s: %w", convID, err)
	}
	out, err := sqldb.Collect(rows, scanGrant)
	if err != nil {
		return nil, fmt.Errorf("grants of conversation %s: %w", convID, err)
	}
	return out, nil
}

// RemoveGrant deactivates grant num of conversation convID now, recording
// removedBy, and returns it as updated. A num that is not an active grant of
// the conversation (unknown, or already removed) returns sqldb.ErrNotFound.
func (s *Store) RemoveGrant(ctx context.Context, convID string, num int, removedBy string) (Grant, error) {
	var out Grant
	err := s.db.WithTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE grants SET removed_at = ?, removed_by = ?
			WHERE conversation_id = ? AND num = ? AND removed_at IS NULL`, s.db.NowMS(), removedBy, convID, num)
		if err != nil {
			return fmt.Errorf("update: %w", err)
		}
		n, err := sqldb.RowsAffected(res)
		if err != nil {
			return err
		}
		if n == 0 {
			return sqldb.ErrNotFound
		}
		out, err = scanGrant(tx.QueryRowContext(ctx, `SELECT `+grantCols+` FROM grants WHERE conversation_id = ? AND num = ?`, convID, num))
		if err != nil {
			return fmt.Errorf("read back: %w", err)
		}
		return nil
	})
	if err != nil {
		return Grant{}, fmt.Errorf("remove grant %d of conversation %s: %w", num, convID, err)
	}
	return out, nil
}
