package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
)

// TestFencedWrites: a conversation's store view fenced by a lease (Fenced)
// writes while its lease is the current tenure; once another replica took
// the lease over, every kind of write the core makes for the conversation
// — ledger marks, the turn's reply, posted marks, card decisions, grants,
// settings — is refused with ErrFenced and changes nothing, on SQLite and
// PostgreSQL, while the new holder's writes succeed.
func TestFencedWrites(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		conv, _, err := s.GetOrCreateConversation(ctx, ConversationKey{Bot: "b", Channel: "C", Thread: "T"}, "coder", "alice")
		if err != nil {
			t.Fatal(err)
		}
		msg, _, err := s.Enqueue(ctx, InboxMessage{ConversationID: conv.ID, Bot: "b", PlatformMsgID: "m1", UserID: "alice", Text: "hi"})
		if err != nil {
			t.Fatal(err)
		}
		card, err := s.RecordApprovalRequest(ctx, Approval{ID: "card-1", ConversationID: conv.ID, ToolName: "Bash",
			Input: []byte(`{"command":"ls"}`), RequestedBy: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		res := "conversation:" + conv.ID

		// Replica A holds the lease: its fenced writes go through.
		la, err := s.AcquireLease(ctx, res, "replica-a", time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		a := s.Fenced(la)
		if err := a.MarkSent(ctx, msg.ID, "hi"); err != nil {
			t.Fatalf("MarkSent by the holder: %v", err)
		}
		if err := a.SetModel(ctx, conv.ID, "model-a"); err != nil {
			t.Fatalf("SetModel by the holder: %v", err)
		}

		// A is paused past its lease; B takes the conversation over,
		// recovers it and answers.
		lb := storetest.TakeOver(t, s, ErrLeaseHeld, res, "replica-b", time.Minute)
		if lb.Token != la.Token+1 {
			t.Fatalf("token after take-over = %d, want %d", lb.Token, la.Token+1)
		}
		b := s.Fenced(lb)
		if n, err := b.ResetForRedelivery(ctx, conv.ID); err != nil || n != 1 {
			t.Fatalf("ResetForRedelivery by the new holder = %d, %v", n, err)
		}
		if _, err := b.RecordApprovalDecision(ctx, card.ID, DecisionExpired, "", "replica lost"); err != nil {
			t.Fatalf("close the card by the new holder: %v", err)
		}
		reopened, err := b.RecordApprovalRequest(ctx, Approval{ID: "card-2", ConversationID: conv.ID, ToolName: "Bash",
			Input: []byte(`{"command":"ls"}`), RequestedBy: "alice"})
		if err != nil {
			t.Fatalf("a new card by the new holder: %v", err)
		}
		if err := b.MarkSent(ctx, msg.ID, "hi"); err != nil {
			t.Fatal(err)
		}
		rows, err := b.EndTurn(ctx, Usage{ConversationID: conv.ID, CostUSD: 0.01}, []OutboxMessage{{ConversationID: conv.ID, Text: "B's answer"}},
			InboxMark{ID: msg.ID, State: InboxCompleted})
		if err != nil || len(rows) != 1 {
			t.Fatalf("EndTurn by the new holder = %v, %v", rows, err)
		}

		// A comes back: everything it writes is fenced out.
		stale := map[string]func() error{
			"MarkInbox": func() error { return a.MarkInbox(ctx, msg.ID, InboxFailed, "stale") },
			"MarkSent":  func() error { return a.MarkSent(ctx, msg.ID, "stale") },
			"EndTurn": func() error {
				_, err := a.EndTurn(ctx, Usage{ConversationID: conv.ID, CostUSD: 1}, []OutboxMessage{{ConversationID: conv.ID, Text: "A's answer"}},
					InboxMark{ID: msg.ID, State: InboxCompleted})
				return err
			},
			"MarkOutboxPosted":   func() error { return a.MarkOutboxPosted(ctx, rows[0].ID) },
			"MarkOutboxFailed":   func() error { _, err := a.MarkOutboxFailed(ctx, rows[0].ID, "stale"); return err },
			"ResetForRedelivery": func() error { _, err := a.ResetForRedelivery(ctx, conv.ID); return err },
			"RecordApprovalDecision": func() error {
				_, err := a.RecordApprovalDecision(ctx, reopened.ID, DecisionDeny, "mallory", "stale")
				return err
			},
			"SetApprovalCardRef": func() error { return a.SetApprovalCardRef(ctx, reopened.ID, "ref", "stale") },
			"AddGrants": func() error {
				_, err := a.AddGrants(ctx, conv.ID, []Grant{{Tool: "Bash", Match: "rm *", GrantedBy: "mallory"}})
				return err
			},
			"SetModel":     func() error { return a.SetModel(ctx, conv.ID, "stale") },
			"SetSessionID": func() error { return a.SetSessionID(ctx, conv.ID, "stale") },
			"AddUsage":     func() error { return a.AddUsage(ctx, Usage{ConversationID: conv.ID, CostUSD: 1}) },
		}
		for name, write := range stale {
			if err := write(); !errors.Is(err, ErrFenced) || !errors.Is(err, ErrLeaseLost) {
				t.Errorf("%s by the replica that lost the lease = %v, want ErrFenced", name, err)
			}
		}

		// The conversation is as B left it.
		got, err := s.InboxByID(ctx, msg.ID)
		if err != nil || got.State != InboxCompleted {
			t.Errorf("message = %+v, %v; want completed by B", got, err)
		}
		out, err := s.PendingOutboxForConversation(ctx, conv.ID)
		if err != nil || len(out) != 1 || out[0].Text != "B's answer" {
			t.Errorf("pending replies = %+v, %v; want B's answer only", out, err)
		}
		ap, err := s.GetApproval(ctx, reopened.ID)
		if err != nil || !ap.Open() || ap.CardMsgID != "" {
			t.Errorf("B's card = %+v, %v; want it open, untouched", ap, err)
		}
		if gs, err := s.ActiveGrants(ctx, conv.ID); err != nil || len(gs) != 0 {
			t.Errorf("grants = %+v, %v; want none", gs, err)
		}
		row, err := s.ConversationByID(ctx, conv.ID)
		if err != nil || row.Model != "model-a" || row.SessionID == "stale" {
			t.Errorf("conversation = %+v, %v; want A's earlier model, no stale session", row, err)
		}
		if tot, err := s.UsageTotals(ctx, conv.ID); err != nil || tot.CostUSD > 0.02 {
			t.Errorf("usage = %+v, %v; want B's turn only", tot, err)
		}

		// B goes on; a released lease fences B's view too.
		if err := b.MarkOutboxPosted(ctx, rows[0].ID); err != nil {
			t.Fatalf("MarkOutboxPosted by the holder: %v", err)
		}
		if err := s.ReleaseLease(ctx, lb); err != nil {
			t.Fatal(err)
		}
		if err := b.SetModel(ctx, conv.ID, "after release"); !errors.Is(err, ErrFenced) {
			t.Errorf("write after the release = %v, want ErrFenced", err)
		}
		// The unfenced store is unaffected (one bridge, no replicas).
		if err := s.SetModel(ctx, conv.ID, "unfenced"); err != nil {
			t.Errorf("unfenced write: %v", err)
		}
	})
}
