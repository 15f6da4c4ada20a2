package convstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/store/sqldb"
)

// Usage is the accounting of one agent result.
type Usage struct {
	ConversationID      string
	SessionID           string
	UserID              string // whose message started the turn (empty = unknown); spend limits sum by it
	Bot                 string // set by the store from the conversation
	CostUSD             float64
	InputTokens         int64
	OutputTokens        int64
	CacheReadTokens     int64
	CacheCreationTokens int64
	DurationMS          int64
	NumTurns            int
	IsError             bool
	CreatedAt           time.Time // set by the store
}

// Totals sums usage rows.
type Totals struct {
	Count               int64 // number of results
	Errors              int64 // results with IsError
	CostUSD             float64
	InputTokens         int64
	OutputTokens        int64
	CacheReadTokens     int64
	CacheCreationTokens int64
	DurationMS          int64
}

// AddUsage records one result of conversation u.ConversationID (must exist).
func (s *Store) AddUsage(ctx context.Context, u Usage) error {
	if u.ConversationID == "" {
		return fmt.Errorf("add usage: conversation id is required: %w", sqldb.ErrInvalidArgument)
	}
	err := s.db.WithTx(ctx, func(tx *sql.Tx) error {
		key, err := conversationKeyTx(ctx, tx, u.ConversationID)
		if err != nil {
			return err
		}
		return s.addUsageTx(ctx, tx, u, key.Bot)
	})
	if err != nil {
		return fmt.Errorf("add usage for conversation %s: %w", u.ConversationID, err)
	}
	return nil
}

// addUsageTx inserts u for bot in tx.
func (s *Store) addUsageTx(ctx context.Context, tx *sql.Tx, u Usage, bot string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO usage
		(conversation_id, session_id, user_id, bot, cost_usd, input_tokens, output_tokens, cache_read_tokens,
		 cache_creation_tokens, duration_ms, num_turns, is_error, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		u.ConversationID, u.SessionID, u.UserID, bot, u.CostUSD, u.InputTokens, u.OutputTokens, u.CacheReadTokens,
		u.CacheCreationTokens, u.DurationMS, u.NumTurns, sqldb.BoolInt(u.IsError), s.db.NowMS())
	if err != nil {
		return fmt.Errorf("insert usage: %w", err)
	}
	return nil
}

const totalsCols = `COUNT(*), COALESCE(SUM(u.is_error), 0), COALESCE(SUM(u.cost_usd), 0),
	COALESCE(SUM(u.input_tokens), 0), COALESCE(SUM(u.output_tokens), 0), COALESCE(SUM(u.cache_read_tokens), 0),
	COALESCE(SUM(u.cache_creation_tokens), 0), COALESCE(SUM(u.duration_ms), 0)`

func scanTotals(r sqldb.Scanner) (Totals, error) {
	var t Totals
	err := r.Scan(&t.Count, &t.Errors, &t.CostUSD, &t.InputTokens, &t.OutputTokens, &t.CacheReadTokens,
		&t.CacheCreationTokens, &t.DurationMS)
	return t, err
}

// UsageTotals sums the usage of conversation convID (zero totals if none).
func (s *Store) UsageTotals(ctx context.Context, convID string) (Totals, error) {
	t, err := scanTotals(s.db.QueryRowContext(ctx, `SELECT `+totalsCols+` FROM usage u WHERE u.conversation_id = ?`, convID))
	if err != nil {
		return Totals{}, fmt.Errorf("usage totals of conversation %s: %w", convID, err)
	}
	return t, nil
}

// BotUsageTotals sums the usage of every conversation of bot (zero totals if
// none).
func (s *Store) BotUsageTotals(ctx context.Context, bot string) (Totals, error) {
	t, err := scanTotals(s.db.QueryRowContext(ctx, `SELECT `+totalsCols+` FROM usage u
		JOIN conversations c ON c.id = u.conversation_id WHERE c.bot = ?`, bot))
	if err != nil {
		return Totals{}, fmt.Errorf("usage totals of bot %s: %w", bot, err)
	}
	return t, nil
}
