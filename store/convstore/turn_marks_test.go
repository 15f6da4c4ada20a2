package convstore

import (
	"context"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

// TestMarkSent: the move to sent and the conversation's activity are one
// write; the summary keeps the first prompt; a final message is not sent
// again, and its conversation's activity is left as it was.
func TestMarkSent(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		storetest.UseClock(s.db, start, 0)
		conv := storetest.NewConvAt(t, s, "bot", "C", "T")
		first, second := enqueue(t, s, conv, "m1"), enqueue(t, s, conv, "m2")

		storetest.UseClock(s.db, start.Add(time.Minute), 0)
		if err := s.MarkSent(ctx, first.ID, "fix the build\nplease"); err != nil {
			t.Fatalf("MarkSent: %v", err)
		}
		if err := s.MarkSent(ctx, first.ID, "fix the build"); err != nil {
			t.Errorf("MarkSent again: %v, want a no-op", err)
		}
		storetest.UseClock(s.db, start.Add(2*time.Minute), 0)
		if err := s.MarkSent(ctx, second.ID, "and the tests"); err != nil {
			t.Fatalf("MarkSent: %v", err)
		}
		for _, id := range []string{first.ID, second.ID} {
			if m, err := s.InboxByID(ctx, id); err != nil || m.State != InboxSent {
				t.Errorf("message %s = %+v, %v; want sent", id, m, err)
			}
		}
		c, err := s.ConversationByID(ctx, conv.ID)
		if err != nil || !c.LastActiveAt.Equal(start.Add(2*time.Minute)) {
			t.Errorf("conversation active at %v, %v; want %v", c.LastActiveAt, err, start.Add(2*time.Minute))
		}
		if sum, err := s.SessionSummary(ctx, conv.ID); err != nil || sum != "fix the build" {
			t.Errorf("summary = %q, %v; want the first prompt's first line", sum, err)
		}

		if err := s.MarkInbox(ctx, first.ID, InboxCompleted, ""); err != nil {
			t.Fatal(err)
		}
		storetest.UseClock(s.db, start.Add(3*time.Minute), 0)
		storetest.WantErrIs(t, "MarkSent of a completed message", s.MarkSent(ctx, first.ID, "again"), ErrBadTransition)
		if c, _ := s.ConversationByID(ctx, conv.ID); !c.LastActiveAt.Equal(start.Add(2 * time.Minute)) {
			t.Errorf("a refused MarkSent noted activity at %v", c.LastActiveAt)
		}
		storetest.WantErrIs(t, "MarkSent of an unknown message", s.MarkSent(ctx, "7d3a7a52-0000-4000-8000-000000000000", "x"), sqldb.ErrNotFound)
	})
}

// TestEndTurnFinishesMessages: the messages a turn handled are finished in
// the transaction of its reply, not at all when the reply is refused; one
// already final is left as it is.
func TestEndTurnFinishesMessages(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		a, b := storetest.NewConvAt(t, s, "bot", "C", "A"), storetest.NewConvAt(t, s, "bot", "C", "B")
		m1, m2, m3 := enqueue(t, s, a, "m1"), enqueue(t, s, a, "m2"), enqueue(t, s, a, "m3")
		for _, m := range []InboxMessage{m1, m2, m3} {
			if err := s.MarkSent(ctx, m.ID, m.Text); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.MarkInbox(ctx, m3.ID, InboxCancelled, "dropped"); err != nil {
			t.Fatal(err)
		}

		// Refused (a reply of another conversation): nothing is finished.
		_, err := s.EndTurn(ctx, Usage{ConversationID: a.ID}, []OutboxMessage{{ConversationID: b.ID, Text: "wrong"}},
			InboxMark{ID: m1.ID, State: InboxCompleted})
		storetest.WantErrIs(t, "EndTurn with another conversation's reply", err, sqldb.ErrInvalidArgument)
		if m, _ := s.InboxByID(ctx, m1.ID); m.State != InboxSent {
			t.Fatalf("a refused turn finished its message: %s", m.State)
		}
		_, err = s.EndTurn(ctx, Usage{ConversationID: a.ID}, nil, InboxMark{ID: m1.ID, State: InboxStarted})
		storetest.WantErrIs(t, "EndTurn marking a message started", err, sqldb.ErrInvalidArgument)

		rows, err := s.EndTurn(ctx, Usage{ConversationID: a.ID, CostUSD: 0.1}, []OutboxMessage{{ConversationID: a.ID, Text: "done"}},
			InboxMark{ID: m1.ID, State: InboxCompleted}, InboxMark{ID: m2.ID, State: InboxCancelled, Why: "stopped"},
			InboxMark{ID: m3.ID, State: InboxCompleted})
		if err != nil || len(rows) != 1 {
			t.Fatalf("EndTurn = %+v, %v", rows, err)
		}
		for _, want := range []struct {
			id    string
			state InboxState
			why   string
		}{{m1.ID, InboxCompleted, ""}, {m2.ID, InboxCancelled, "stopped"}, {m3.ID, InboxCancelled, "dropped"}} {
			if m, err := s.InboxByID(ctx, want.id); err != nil || m.State != want.state || m.Error != want.why {
				t.Errorf("message %s = %s %q, %v; want %s %q", want.id, m.State, m.Error, err, want.state, want.why)
			}
		}
		if und, err := s.UndeliveredInbox(ctx, a.ID); err != nil || len(und) != 0 {
			t.Errorf("undelivered after the turn: %d, %v", len(und), err)
		}
	})
}
