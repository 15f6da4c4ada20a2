package store

import (
	"context"
	"fmt"
	"testing"
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
	s := openTest(t)
	a := newConv(t, s, "bot", "C", "A")
	b := newConv(t, s, "bot", "C", "B")

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
	wantErrIs(t, "MarkOutboxFailed on posted", err, ErrBadTransition)
	if got, _ := s.OutboxByID(ctx, r1.ID); got.State != OutboxPosted || got.Attempts != 0 {
		t.Fatalf("posted reply changed: %+v", got)
	}

	// r2 fails until it is given up.
	for i := 1; i <= MaxOutboxAttempts; i++ {
		got, err := s.MarkOutboxFailed(ctx, r2.ID, fmt.Sprint("error ", i))
		if err != nil {
			t.Fatalf("MarkOutboxFailed %d: %v", i, err)
		}
		wantState := OutboxPending
		if i == MaxOutboxAttempts {
			wantState = OutboxFailed
		}
		if got.Attempts != i || got.State != wantState || got.LastError != fmt.Sprint("error ", i) {
			t.Fatalf("after failure %d: %+v, want attempts %d state %s", i, got, i, wantState)
		}
	}
	_, err = s.MarkOutboxFailed(ctx, r2.ID, "again")
	wantErrIs(t, "MarkOutboxFailed on failed", err, ErrBadTransition)
	wantErrIs(t, "MarkOutboxPosted on failed", s.MarkOutboxPosted(ctx, r2.ID), ErrBadTransition)

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
}

func TestOutboxErrors(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	conv := newConv(t, s, "bot", "C", "T")
	r, err := s.AddOutbox(ctx, OutboxMessage{ConversationID: conv.ID, Text: "x"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"add without conversation", func() error { _, err := s.AddOutbox(ctx, OutboxMessage{Text: "x"}); return err }(), ErrInvalidArgument},
		{"add to unknown conversation", func() error {
			_, err := s.AddOutbox(ctx, OutboxMessage{ConversationID: "nope", Text: "x"})
			return err
		}(), ErrNotFound},
		{"add duplicate id", func() error {
			_, err := s.AddOutbox(ctx, OutboxMessage{ID: r.ID, ConversationID: conv.ID, Text: "y"})
			return err
		}(), ErrDuplicate},
		{"posted unknown", s.MarkOutboxPosted(ctx, "nope"), ErrNotFound},
		{"failed unknown", func() error { _, err := s.MarkOutboxFailed(ctx, "nope", "e"); return err }(), ErrNotFound},
		{"get unknown", func() error { _, err := s.OutboxByID(ctx, "nope"); return err }(), ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantErrIs(t, tt.name, tt.err, tt.want) })
	}
}

// TestEndTurn: a turn's usage and reply parts are stored together, and not
// at all when any part is refused.
func TestEndTurn(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	a := newConv(t, s, "bot", "C", "A")
	b := newConv(t, s, "bot", "C", "B")

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
	wantErrIs(t, "EndTurn with another conversation's reply", err, ErrInvalidArgument)
	_, err = s.EndTurn(ctx, Usage{ConversationID: "nope"}, nil)
	wantErrIs(t, "EndTurn unknown conversation", err, ErrNotFound)
	if tot, _ := s.UsageTotals(ctx, a.ID); tot.Count != 1 {
		t.Errorf("usage rows %d after refused turns, want 1", tot.Count)
	}
	if pending, err := s.PendingOutbox(ctx); err != nil || len(pending) != 2 {
		t.Errorf("pending outbox after refused turns: %d, %v; want the first turn's 2", len(pending), err)
	}
}
