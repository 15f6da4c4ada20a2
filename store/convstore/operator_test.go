package convstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

func TestOperatorQueries(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		clk := storetest.UseClock(s.db, time.Date(2026, 5, 6, 23, 0, 0, 0, time.UTC), time.Minute)
		slackConv := storetest.NewConvAt(t, s, "slack", "C1", "T1")
		discordConv := storetest.NewConvAt(t, s, "discord", "D1", "")

		for _, id := range []string{"r1", "r2", "r3"} {
			if _, err := s.RecordApprovalRequest(ctx, Approval{ID: id, ConversationID: slackConv.ID, ToolName: "Bash", Input: []byte(`{}`), RequestedBy: "U1"}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.RecordApprovalDecision(ctx, "r1", DecisionAllow, "web:ana", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RecordApprovalDecision(ctx, "r3", DecisionDeny, "U2", "no"); err != nil {
			t.Fatal(err)
		}

		t.Run("GetApproval", func(t *testing.T) {
			a, err := s.GetApproval(ctx, "r2")
			if err != nil || !a.Open() || a.ConversationID != slackConv.ID {
				t.Errorf("GetApproval(r2) = %+v, %v; want the open request", a, err)
			}
			if _, err := s.GetApproval(ctx, "nope"); !errors.Is(err, sqldb.ErrNotFound) {
				t.Errorf("GetApproval(unknown) err = %v, want sqldb.ErrNotFound", err)
			}
		})

		t.Run("DecidedApprovals newest first, open ones left out", func(t *testing.T) {
			log, err := s.DecidedApprovals(ctx, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(log) != 2 || log[0].ID != "r3" || log[1].ID != "r1" {
				t.Fatalf("audit log %+v, want r3 then r1", log)
			}
			if log[1].DecidedBy != "web:ana" || log[1].Key != (ConversationKey{"slack", "C1", "T1"}) {
				t.Errorf("entry %+v lacks decider or conversation", log[1])
			}
			if one, _ := s.DecidedApprovals(ctx, 1); len(one) != 1 {
				t.Errorf("limit 1 gave %d entries", len(one))
			}
		})

		t.Run("UsageByBotDay", func(t *testing.T) {
			add := func(conv Conversation, cost float64) {
				t.Helper()
				if err := s.AddUsage(ctx, Usage{ConversationID: conv.ID, CostUSD: cost, InputTokens: 10}); err != nil {
					t.Fatal(err)
				}
			}
			clk.Set(time.Date(2026, 5, 6, 23, 30, 0, 0, time.UTC))
			add(slackConv, 0.25)
			add(slackConv, 0.5)
			add(discordConv, 1)
			clk.Set(time.Date(2026, 5, 7, 9, 0, 0, 0, time.UTC))
			add(slackConv, 2)

			days, err := s.UsageByBotDay(ctx, time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))
			if err != nil {
				t.Fatal(err)
			}
			type row struct {
				bot, day string
				n        int64
				cost     float64
			}
			var got []row
			for _, d := range days {
				got = append(got, row{d.Bot, d.Day, d.Count, d.CostUSD})
			}
			want := []row{{"slack", "2026-05-07", 1, 2}, {"discord", "2026-05-06", 1, 1}, {"slack", "2026-05-06", 2, 0.75}}
			if len(got) != len(want) {
				t.Fatalf("UsageByBotDay = %+v, want %+v", got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("row %d = %+v, want %+v", i, got[i], want[i])
				}
			}
			later, _ := s.UsageByBotDay(ctx, time.Date(2026, 5, 7, 0, 0, 0, 0, time.UTC))
			if len(later) != 1 {
				t.Errorf("since May 7: %+v, want one row", later)
			}
		})
	})
}
