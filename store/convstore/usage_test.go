package convstore

import (
	"context"
	"math"
	"testing"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

func TestUsageTotals(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		a := storetest.NewConvAt(t, s, "team", "C", "A")
		b := storetest.NewConvAt(t, s, "team", "C", "B")
		other := storetest.NewConvAt(t, s, "phone", "chat", "")

		rows := []Usage{
			{ConversationID: a.ID, SessionID: "s1", CostUSD: 0.10, InputTokens: 100, OutputTokens: 10, CacheReadTokens: 1000, CacheCreationTokens: 50, DurationMS: 1200, NumTurns: 2},
			{ConversationID: a.ID, SessionID: "s1", CostUSD: 0.25, InputTokens: 200, OutputTokens: 20, CacheReadTokens: 2000, CacheCreationTokens: 0, DurationMS: 800, NumTurns: 1, IsError: true},
			{ConversationID: b.ID, SessionID: "s2", CostUSD: 1.00, InputTokens: 5, OutputTokens: 7, DurationMS: 100, NumTurns: 1},
			{ConversationID: other.ID, SessionID: "s3", CostUSD: 9.00, InputTokens: 9, OutputTokens: 9, DurationMS: 9, NumTurns: 9},
		}
		for _, u := range rows {
			if err := s.AddUsage(ctx, u); err != nil {
				t.Fatalf("AddUsage: %v", err)
			}
		}
		storetest.WantErrIs(t, "AddUsage unknown conversation", s.AddUsage(ctx, Usage{ConversationID: "nope", CostUSD: 1}), sqldb.ErrNotFound)
		storetest.WantErrIs(t, "AddUsage no conversation", s.AddUsage(ctx, Usage{CostUSD: 1}), sqldb.ErrInvalidArgument)

		tests := []struct {
			name string
			get  func() (Totals, error)
			want Totals
		}{
			{"conversation a", func() (Totals, error) { return s.UsageTotals(ctx, a.ID) },
				Totals{Count: 2, Errors: 1, CostUSD: 0.35, InputTokens: 300, OutputTokens: 30, CacheReadTokens: 3000, CacheCreationTokens: 50, DurationMS: 2000}},
			{"conversation b", func() (Totals, error) { return s.UsageTotals(ctx, b.ID) },
				Totals{Count: 1, CostUSD: 1.00, InputTokens: 5, OutputTokens: 7, DurationMS: 100}},
			{"no usage", func() (Totals, error) { return s.UsageTotals(ctx, "nope") }, Totals{}},
			{"bot team", func() (Totals, error) { return s.BotUsageTotals(ctx, "team") },
				Totals{Count: 3, Errors: 1, CostUSD: 1.35, InputTokens: 305, OutputTokens: 37, CacheReadTokens: 3000, CacheCreationTokens: 50, DurationMS: 2100}},
			{"bot phone", func() (Totals, error) { return s.BotUsageTotals(ctx, "phone") },
				Totals{Count: 1, CostUSD: 9, InputTokens: 9, OutputTokens: 9, DurationMS: 9}},
			{"unknown bot", func() (Totals, error) { return s.BotUsageTotals(ctx, "nope") }, Totals{}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := tt.get()
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(got.CostUSD-tt.want.CostUSD) > 1e-9 {
					t.Errorf("cost = %v, want %v", got.CostUSD, tt.want.CostUSD)
				}
				got.CostUSD, tt.want.CostUSD = 0, 0
				if got != tt.want {
					t.Errorf("totals = %+v, want %+v", got, tt.want)
				}
			})
		}
	})
}
