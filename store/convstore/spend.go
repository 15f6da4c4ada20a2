package convstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/store/sqldb"
)

// SpendQuery selects the usage rows a spend limit sums: those of one bot
// recorded at or after Since, of one person (UserID) or of everyone ("").
type SpendQuery struct {
	Bot    string
	UserID string // "" = every user of the bot
	Since  time.Time
}

// Spend is what a SpendQuery's rows add up to.
type Spend struct {
	CostUSD float64
	Turns   int64 // usage rows: one per agent result
}

// where returns the query's WHERE clause and arguments.
func (q SpendQuery) where() (string, []any) {
	if q.UserID == "" {
		return `bot = ? AND created_at >= ?`, []any{q.Bot, q.Since.UnixMilli()}
	}
	return `bot = ? AND user_id = ? AND created_at >= ?`, []any{q.Bot, q.UserID, q.Since.UnixMilli()}
}

// Spend sums the cost and counts the turns selected by q.
func (s *Store) Spend(ctx context.Context, q SpendQuery) (Spend, error) {
	if q.Bot == "" {
		return Spend{}, fmt.Errorf("spend: bot is required: %w", sqldb.ErrInvalidArgument)
	}
	where, args := q.where()
	var sp Spend
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(cost_usd), 0), COUNT(*) FROM usage WHERE `+where, args...).
		Scan(&sp.CostUSD, &sp.Turns)
	if err != nil {
		return Spend{}, fmt.Errorf("spend of bot %s user %q since %s: %w", q.Bot, q.UserID, q.Since.Format(time.RFC3339), err)
	}
	return sp, nil
}

// NthTurnTime returns when the n-th (0 = oldest) turn selected by q was
// recorded, or the zero time if there are not that many. A sliding-window
// limit of L turns with k ≥ L turns in the window frees up when turn k-L
// leaves the window.
func (s *Store) NthTurnTime(ctx context.Context, q SpendQuery, n int64) (time.Time, error) {
	if q.Bot == "" || n < 0 {
		return time.Time{}, fmt.Errorf("nth turn time: bot and n ≥ 0 are required: %w", sqldb.ErrInvalidArgument)
	}
	where, args := q.where()
	var ms int64
	err := s.db.QueryRowContext(ctx, `SELECT created_at FROM usage WHERE `+where+
		` ORDER BY created_at, seq LIMIT 1 OFFSET ?`, append(args, n)...).Scan(&ms)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, fmt.Errorf("turn %d of bot %s user %q: %w", n, q.Bot, q.UserID, err)
	}
	return sqldb.FromMS(ms), nil
}
