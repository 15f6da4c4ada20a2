package convstore

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
	"github.com/google/uuid"
)

func outboxIDs(ms []OutboxMessage) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func TestOutboxFlow(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		a := storetest.NewConvAt(t, s, "bot", "C", "A")
		b := storetest.NewConvAt(t, s, "bot", "C", "B")

		r1, err := s.AddOutbox(ctx, OutboxMessage{ConversationID: a.ID, Text: "first", ReplyTo: "C:1.1"})
		if err != nil {
			t.Fatalf("AddOutbox: %v", err)
		}
		if r1.ID == "" || r1.Key != a.Key || r1.State != OutboxPending || r1.Attempts != 0 || r1.Text != "first" || r1.ReplyTo != "C:1.1" {
			t.Fatalf("AddOutbox returned %+v", r1)
		}
		elsewhere := ConversationKey{Bot: "bot", Channel: "C", Thread: "other"}
		r2, err := s.AddOutbox(ctx, OutboxMessage{ConversationID: b.ID, Key: elsewhere, Text: "second"})
		if err != nil || r2.Key != elsewhere {
			t.Fatalf("AddOutbox with key: %+v, %v", r2, err)
		}
		r3, err := s.AddOutbox(ctx, OutboxMessage{ConversationID: a.ID, Text: "third"})
		if err != nil {
			t.Fatal(err)
		}

		pending, err := s.PendingOutbox(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fmt.Sprint(outboxIDs(pending)), fmt.Sprint([]string{r1.ID, r2.ID, r3.ID}); got != want {
			t.Fatalf("PendingOutbox = %v, want %v", got, want)
		}
		forA, err := s.PendingOutboxForConversation(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fmt.Sprint(outboxIDs(forA)), fmt.Sprint([]string{r1.ID, r3.ID}); got != want {
			t.Fatalf("PendingOutboxForConversation = %v, want %v", got, want)
		}
		if forA[0].ReplyTo != "C:1.1" || forA[1].ReplyTo != "" {
			t.Errorf("reply_to read back as %q, %q", forA[0].ReplyTo, forA[1].ReplyTo)
		}

		if err := s.MarkOutboxPosted(ctx, r1.ID); err != nil {
			t.Fatalf("MarkOutboxPosted: %v", err)
		}
		if err := s.MarkOutboxPosted(ctx, r1.ID); err != nil {
			t.Fatalf("MarkOutboxPosted again (no-op): %v", err)
		}
		_, err = s.MarkOutboxFailed(ctx, r1.ID, "late failure")
		storetest.WantErrIs(t, "MarkOutboxFailed on posted", err, ErrBadTransition)
		if got, _ := s.OutboxByID(ctx, r1.ID); got.State != OutboxPosted || got.Attempts != 0 {
			t.Fatalf("posted reply changed: %+v", got)
		}

		// r2 fails and is retried (no limit on attempts: the caller gives up),
		// then is given up.
		clock := storetest.UseClock(s.db, time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), time.Second)
		first := clock.Time().Add(time.Second)
		for i := 1; i <= 8; i++ {
			got, err := s.MarkOutboxRetry(ctx, r2.ID, fmt.Sprint("error ", i))
			if err != nil {
				t.Fatalf("MarkOutboxRetry %d: %v", i, err)
			}
			if got.Attempts != i || got.State != OutboxPending || got.LastError != fmt.Sprint("error ", i) || !got.FirstFailedAt.Equal(first) {
				t.Fatalf("after failure %d: %+v, want attempts %d, pending, first failure at %s", i, got, i, first)
			}
		}
		got, err := s.MarkOutboxFailed(ctx, r2.ID, "gone")
		if err != nil || got.Attempts != 9 || got.State != OutboxFailed || got.LastError != "gone" || !got.FirstFailedAt.Equal(first) {
			t.Fatalf("MarkOutboxFailed = %+v, %v; want attempts 9, failed, first failure kept", got, err)
		}
		_, err = s.MarkOutboxRetry(ctx, r2.ID, "again")
		storetest.WantErrIs(t, "MarkOutboxRetry on failed", err, ErrBadTransition)
		_, err = s.MarkOutboxFailed(ctx, r2.ID, "again")
		storetest.WantErrIs(t, "MarkOutboxFailed on failed", err, ErrBadTransition)
		storetest.WantErrIs(t, "MarkOutboxPosted on failed", s.MarkOutboxPosted(ctx, r2.ID), ErrBadTransition)

		pending, err = s.PendingOutbox(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fmt.Sprint(outboxIDs(pending)), fmt.Sprint([]string{r3.ID}); got != want {
			t.Fatalf("PendingOutbox after post/fail = %v, want %v", got, want)
		}
		if forB, err := s.PendingOutboxForConversation(ctx, b.ID); err != nil || len(forB) != 0 {
			t.Fatalf("PendingOutboxForConversation(b) = %v, %v; want none", forB, err)
		}
	})
}

func TestOutboxErrors(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		conv := storetest.NewConvAt(t, s, "bot", "C", "T")
		r, err := s.AddOutbox(ctx, OutboxMessage{ConversationID: conv.ID, Text: "x"})
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name string
			err  error
			want error
		}{
			{"add without conversation", func() error { _, err := s.AddOutbox(ctx, OutboxMessage{Text: "x"}); return err }(), sqldb.ErrInvalidArgument},
			{"add to unknown conversation", func() error {
				_, err := s.AddOutbox(ctx, OutboxMessage{ConversationID: "nope", Text: "x"})
				return err
			}(), sqldb.ErrNotFound},
			{"add duplicate id", func() error {
				_, err := s.AddOutbox(ctx, OutboxMessage{ID: r.ID, ConversationID: conv.ID, Text: "y"})
				return err
			}(), sqldb.ErrDuplicate},
			{"posted unknown", s.MarkOutboxPosted(ctx, "nope"), sqldb.ErrNotFound},
			{"failed unknown", func() error { _, err := s.MarkOutboxFailed(ctx, "nope", "e"); return err }(), sqldb.ErrNotFound},
			{"retry unknown", func() error { _, err := s.MarkOutboxRetry(ctx, "nope", "e"); return err }(), sqldb.ErrNotFound},
			{"get unknown", func() error { _, err := s.OutboxByID(ctx, "nope"); return err }(), sqldb.ErrNotFound},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) { storetest.WantErrIs(t, tt.name, tt.err, tt.want) })
		}
	})
}

// TestEndTurn: a turn's usage and reply parts are stored together, and not
// at all when any part is refused.
func TestEndTurn(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		a := storetest.NewConvAt(t, s, "bot", "C", "A")
		b := storetest.NewConvAt(t, s, "bot", "C", "B")

		rows, err := s.EndTurn(ctx, Usage{ConversationID: a.ID, CostUSD: 0.5, NumTurns: 1},
			[]OutboxMessage{{ConversationID: a.ID, Text: "part 1", ReplyTo: "C:1.1"}, {ConversationID: a.ID, Text: "part 2"}})
		if err != nil {
			t.Fatalf("EndTurn: %v", err)
		}
		if len(rows) != 2 || rows[0].Text != "part 1" || rows[0].ReplyTo != "C:1.1" || rows[1].Text != "part 2" ||
			rows[0].Key != a.Key || rows[0].State != OutboxPending || rows[0].ID == "" || rows[0].ID == rows[1].ID {
			t.Fatalf("EndTurn returned %+v", rows)
		}
		if tot, err := s.UsageTotals(ctx, a.ID); err != nil || tot.Count != 1 || tot.CostUSD != 0.5 {
			t.Errorf("usage after EndTurn: %+v, %v", tot, err)
		}
		if bt, err := s.BotUsageTotals(ctx, "bot"); err != nil || bt.Count != 1 {
			t.Errorf("bot usage after EndTurn: %+v, %v (the bot comes from the conversation)", bt, err)
		}

		// A reply of another conversation: nothing of the turn is stored.
		_, err = s.EndTurn(ctx, Usage{ConversationID: a.ID, CostUSD: 1}, []OutboxMessage{{ConversationID: a.ID, Text: "ok"}, {ConversationID: b.ID, Text: "wrong"}})
		storetest.WantErrIs(t, "EndTurn with another conversation's reply", err, sqldb.ErrInvalidArgument)
		_, err = s.EndTurn(ctx, Usage{ConversationID: "nope"}, nil)
		storetest.WantErrIs(t, "EndTurn unknown conversation", err, sqldb.ErrNotFound)
		if tot, _ := s.UsageTotals(ctx, a.ID); tot.Count != 1 {
			t.Errorf("usage rows %d after refused turns, want 1", tot.Count)
		}
		if pending, err := s.PendingOutbox(ctx); err != nil || len(pending) != 2 {
			t.Errorf("pending outbox after refused turns: %d, %v; want the first turn's 2", len(pending), err)
		}
	})
}

// TestOutboxSummary: per bot, the pending replies with the oldest one's
// time, and the replies given up since the time asked for.
func TestOutboxSummary(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		clock := storetest.UseClock(s.db, time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), time.Minute)
		a := storetest.NewConvAt(t, s, "alpha", "C", "A")
		b := storetest.NewConvAt(t, s, "beta", "C", "B")
		add := func(c Conversation) OutboxMessage {
			t.Helper()
			m, err := s.AddOutbox(ctx, OutboxMessage{ConversationID: c.ID, Text: "x"})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		oldFail := add(b)
		if _, err := s.MarkOutboxFailed(ctx, oldFail.ID, "old"); err != nil {
			t.Fatal(err)
		}
		since := clock.Time().Add(30 * time.Second)
		a1 := add(a)
		add(a) // waits behind a1, never tried
		if _, err := s.MarkOutboxRetry(ctx, a1.ID, "503"); err != nil {
			t.Fatal(err)
		}
		posted := add(a)
		if err := s.MarkOutboxPosted(ctx, posted.ID); err != nil {
			t.Fatal(err)
		}
		newFail := add(b)
		if _, err := s.MarkOutboxFailed(ctx, newFail.ID, "gone"); err != nil {
			t.Fatal(err)
		}
		got, err := s.OutboxSummary(ctx, since)
		if err != nil {
			t.Fatal(err)
		}
		want := []OutboxBotSummary{{Bot: "alpha", Waiting: 2, OldestWaiting: a1.CreatedAt}, {Bot: "beta", Failed: 1}}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("OutboxSummary = %+v, want %+v", got, want)
		}
	})
}

// TestOutboxReturnsWhatIsStored: the replies AddOutbox and EndTurn return
// (built without reading them back) are the ones the outbox holds, fields
// the caller may not set included.
func TestOutboxReturnsWhatIsStored(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		conv := storetest.NewConvAt(t, s, "bot", "C", "T")
		other := ConversationKey{Bot: "bot", Channel: "D", Thread: "9"}
		one, err := s.AddOutbox(ctx, OutboxMessage{ConversationID: conv.ID, Text: "a", ReplyTo: "1.1", Key: other,
			State: OutboxFailed, Attempts: 3, LastError: "caller's", FirstFailedAt: time.Unix(5, 0)})
		if err != nil {
			t.Fatal(err)
		}
		turn, err := s.EndTurn(ctx, Usage{ConversationID: conv.ID, SessionID: "s"},
			[]OutboxMessage{{ConversationID: conv.ID, Text: "héllo\n"}, {ConversationID: conv.ID, Text: "b", ID: uuid.NewString()}})
		if err != nil {
			t.Fatal(err)
		}
		for i, got := range append([]OutboxMessage{one}, turn...) {
			stored, err := s.OutboxByID(ctx, got.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, stored) {
				t.Errorf("%d: returned\n%+v\nthe outbox holds\n%+v", i, got, stored)
			}
		}
	})
}
