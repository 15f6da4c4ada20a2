package convstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/store/sqldb"
)

// This file holds the queries of the operator view (the web console's
// admin pages): one approval, the audit log, usage per bot and day.

// GetApproval returns the request id, or sqldb.ErrNotFound.
func (s *Store) GetApproval(ctx context.Context, id string) (Approval, error) {
	a, err := scanApproval(s.db.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Approval{}, fmt.Errorf("approval %s: %w", id, sqldb.ErrNotFound)
	}
	if err != nil {
		return Approval{}, fmt.Errorf("approval %s: %w", id, err)
	}
	return a, nil
}

// AuditEntry is a decided approval with the conversation it belongs to.
type AuditEntry struct {
	Approval
	Key ConversationKey
}

// DecidedApprovals returns the latest limit decided requests of every bot,
// newest first: the approvals audit log.
func (s *Store) DecidedApprovals(ctx context.Context, limit int) ([]AuditEntry, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+sqldb.Prefixed("a.", approvalCols)+`, c.bot, c.channel, c.thread
		FROM approvals a JOIN conversations c ON c.id = a.conversation_id
		WHERE a.decided_at IS NOT NULL ORDER BY a.decided_at DESC, a.seq DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	out, err := sqldb.Collect(rows, func(r sqldb.Scanner) (AuditEntry, error) {
		var e AuditEntry
		var requested int64
		var decided sql.NullInt64
		err := r.Scan(&e.ID, &e.ConversationID, &e.ToolName, &e.Input, &e.RequestedBy, &e.CardRef, &e.Decision,
			&e.DecidedBy, &e.Message, &requested, &decided, &e.CardMsgID, &e.Key.Bot, &e.Key.Channel, &e.Key.Thread)
		e.RequestedAt = sqldb.FromMS(requested)
		if decided.Valid {
			e.DecidedAt = sqldb.FromMS(decided.Int64)
		}
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return out, nil
}

// DayUsage is the usage of one bot on one UTC day.
type DayUsage struct {
	Bot string
	Day string // YYYY-MM-DD, UTC
	Totals
}

// UsageByBotDay sums usage per bot and UTC day since the given time,
// newest day first, bots by name.
func (s *Store) UsageByBotDay(ctx context.Context, since time.Time) ([]DayUsage, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT c.bot, `+s.db.Dialect().UTCDay("u.created_at")+` AS day, `+totalsCols+`
		FROM usage u JOIN conversations c ON c.id = u.conversation_id
		WHERE u.created_at >= ? GROUP BY c.bot, day ORDER BY day DESC, c.bot`, since.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("usage per bot and day: %w", err)
	}
	out, err := sqldb.Collect(rows, func(r sqldb.Scanner) (DayUsage, error) {
		var d DayUsage
		err := r.Scan(&d.Bot, &d.Day, &d.Count, &d.Errors, &d.CostUSD, &d.InputTokens, &d.OutputTokens,
			&d.CacheReadTokens, &d.CacheCreationTokens, &d.DurationMS)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("usage per bot and day: %w", err)
	}
	return out, nil
}
