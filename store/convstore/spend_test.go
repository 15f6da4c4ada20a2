package convstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

func TestSpendByBotUserAndWindow(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		start := time.Date(2025, 3, 10, 8, 0, 0, 0, time.UTC)
		storetest.UseClock(s.db, start, 0)
		a1 := storetest.NewConvAt(t, s, "a", "C1", "t1")
		a2 := storetest.NewConvAt(t, s, "a", "C2", "t2")
		b1 := storetest.NewConvAt(t, s, "b", "C1", "t1")
		add := func(conv Conversation, user string, cost float64, at time.Time) {
			t.Helper()
			storetest.UseClock(s.db, at, 0)
			if err := s.AddUsage(ctx, Usage{ConversationID: conv.ID, SessionID: "s", UserID: user, CostUSD: cost}); err != nil {
				t.Fatal(err)
			}
		}
		add(a1, "ann", 1.0, start.Add(-2*time.Hour)) // before the window
		add(a1, "ann", 2.0, start)
		add(a2, "ann", 0.5, start.Add(time.Minute))
		add(a1, "bob", 4.0, start.Add(2*time.Minute))
		add(b1, "ann", 8.0, start.Add(3*time.Minute)) // another bot

		cases := []struct {
			name string
			q    SpendQuery
			want Spend
		}{
			{"ann on a since start", SpendQuery{Bot: "a", UserID: "ann", Since: start}, Spend{CostUSD: 2.5, Turns: 2}},
			{"ann on a, all time", SpendQuery{Bot: "a", UserID: "ann"}, Spend{CostUSD: 3.5, Turns: 3}},
			{"everyone on a since start", SpendQuery{Bot: "a", Since: start}, Spend{CostUSD: 6.5, Turns: 3}},
			{"bob on b", SpendQuery{Bot: "b", UserID: "bob"}, Spend{}},
			{"ann on b", SpendQuery{Bot: "b", UserID: "ann", Since: start}, Spend{CostUSD: 8, Turns: 1}},
			{"after everything", SpendQuery{Bot: "a", Since: start.Add(time.Hour)}, Spend{}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				got, err := s.Spend(ctx, tc.q)
				if err != nil {
					t.Fatal(err)
				}
				if got != tc.want {
					t.Errorf("Spend = %+v, want %+v", got, tc.want)
				}
			})
		}

		q := SpendQuery{Bot: "a", UserID: "ann", Since: start.Add(-time.Hour)}
		for n, want := range []time.Time{start, start.Add(time.Minute), {}} {
			got, err := s.NthTurnTime(ctx, q, int64(n))
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(want) {
				t.Errorf("NthTurnTime(%d) = %v, want %v", n, got, want)
			}
		}
		if _, err := s.Spend(ctx, SpendQuery{}); !errors.Is(err, sqldb.ErrInvalidArgument) {
			t.Errorf("Spend without a bot: err = %v, want sqldb.ErrInvalidArgument", err)
		}
	})
}

// TestMigration0008FillsUsageBot: usage rows recorded before migration 8
// get their conversation's bot (and no user), so limits count them.
func TestMigration0008FillsUsageBot(t *testing.T) {
	for _, driver := range storetest.Drivers() {
		t.Run(driver, func(t *testing.T) { testMigration0008FillsUsageBot(t, kit.Empty(t, driver)) })
	}
}

func testMigration0008FillsUsageBot(t *testing.T, db storetest.DB) {
	ctx := context.Background()
	old, err := kit.OpenDB(ctx, db, storetest.Migrations(t, db.Driver)[:7])
	if err != nil {
		t.Fatal(err)
	}
	conv := oldConv(t, old, "team", "C1", "t1")
	if _, err := old.db.Read().ExecContext(ctx, `INSERT INTO usage (conversation_id, session_id, cost_usd, created_at) VALUES (?, 's', 1.25, ?)`,
		conv.ID, time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	if err := old.db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := kit.OpenDB(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.db.Close()
	got, err := s.Spend(ctx, SpendQuery{Bot: "team"})
	if err != nil {
		t.Fatal(err)
	}
	if got != (Spend{CostUSD: 1.25, Turns: 1}) {
		t.Errorf("spend of the old row = %+v, want it counted for its bot", got)
	}
	if got, err := s.Spend(ctx, SpendQuery{Bot: "team", UserID: "U1"}); err != nil || got.Turns != 0 {
		t.Errorf("old row counted for a user: %+v, %v", got, err)
	}
}
