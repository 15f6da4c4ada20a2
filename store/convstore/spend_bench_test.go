package convstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
)

// BenchmarkSpend measures the queries of a spend-limit check on a busy
// bot: 100,000 usage rows of 100 users over 30 days. A message that goes to
// the agent runs at most six of them (three windows, per user and total).
func BenchmarkSpend(b *testing.B) {
	kit.EachB(b, benchSpend)
}

func benchSpend(b *testing.B, s *Store) {
	ctx := context.Background()
	conv := storetest.NewConvAt(b, s, "bot", "C", "T")
	now := time.Now()
	tx, err := s.db.Read().BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 100_000 {
		at := now.Add(-time.Duration(i) * (30 * 24 * time.Hour / 100_000))
		if _, err := tx.ExecContext(ctx, `INSERT INTO usage (conversation_id, session_id, user_id, bot, cost_usd, created_at)
			VALUES (?, 's', ?, 'bot', 0.01, ?)`, conv.ID, fmt.Sprintf("U%d", i%100), at.UnixMilli()); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	month, day, hour := now.Add(-30*24*time.Hour), now.Add(-24*time.Hour), now.Add(-time.Hour)
	for _, bc := range []struct {
		name string
		q    SpendQuery
	}{
		{"user-month", SpendQuery{Bot: "bot", UserID: "U7", Since: month}},
		{"user-day", SpendQuery{Bot: "bot", UserID: "U7", Since: day}},
		{"total-month", SpendQuery{Bot: "bot", Since: month}},
		{"total-hour", SpendQuery{Bot: "bot", Since: hour}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Spend(ctx, bc.q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
