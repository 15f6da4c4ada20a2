package convstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

func TestApprovalsFlow(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		start := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
		storetest.UseClock(s.db, start, time.Second)
		a := storetest.NewConvAt(t, s, "bot", "C", "A")
		b := storetest.NewConvAt(t, s, "bot", "C", "B")
		input := []byte(`{"command":"git status"}`)

		r1, err := s.RecordApprovalRequest(ctx, Approval{ID: "req-1", ConversationID: a.ID, ToolName: "Bash", Input: input, RequestedBy: "U1",
			Decision: DecisionAllow, DecidedBy: "ignored"})
		if err != nil {
			t.Fatalf("RecordApprovalRequest: %v", err)
		}
		if !r1.Open() || r1.Decision != "" || r1.DecidedBy != "" || !bytes.Equal(r1.Input, input) || r1.RequestedBy != "U1" || r1.RequestedAt.IsZero() {
			t.Fatalf("recorded request = %+v", r1)
		}
		if _, err := s.RecordApprovalRequest(ctx, Approval{ID: "req-2", ConversationID: b.ID, ToolName: "Edit"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RecordApprovalRequest(ctx, Approval{ID: "req-3", ConversationID: a.ID, ToolName: "WebFetch", CardRef: "card-3"}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetApprovalCardRef(ctx, "req-1", "C/1234.5678", "1234.5678"); err != nil {
			t.Fatalf("SetApprovalCardRef: %v", err)
		}

		open, err := s.OpenApprovals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := approvalIDs(open); got != "[req-1 req-2 req-3]" {
			t.Fatalf("OpenApprovals = %s", got)
		}
		if open[0].CardRef != "C/1234.5678" || open[2].CardRef != "card-3" {
			t.Fatalf("card refs = %q, %q", open[0].CardRef, open[2].CardRef)
		}

		d, err := s.RecordApprovalDecision(ctx, "req-1", DecisionDeny, "U9", "Denied by @bob")
		if err != nil {
			t.Fatalf("RecordApprovalDecision: %v", err)
		}
		if d.Open() || d.Decision != DecisionDeny || d.DecidedBy != "U9" || d.Message != "Denied by @bob" || !d.DecidedAt.After(d.RequestedAt) {
			t.Fatalf("decided approval = %+v", d)
		}
		// A reply quoting the card finds it, decided, in its conversation only.
		if q, err := s.ApprovalByCardMessage(ctx, a.ID, "1234.5678"); err != nil || q.ID != "req-1" || q.Open() || q.CardMsgID != "1234.5678" {
			t.Fatalf("ApprovalByCardMessage = %+v, %v", q, err)
		}
		_, err = s.ApprovalByCardMessage(ctx, b.ID, "1234.5678")
		storetest.WantErrIs(t, "card of another conversation", err, sqldb.ErrNotFound)
		_, err = s.ApprovalByCardMessage(ctx, a.ID, "")
		storetest.WantErrIs(t, "no card message", err, sqldb.ErrNotFound)
		// The first decision stands.
		_, err = s.RecordApprovalDecision(ctx, "req-1", DecisionAllow, "U1", "")
		storetest.WantErrIs(t, "second decision", err, ErrAlreadyDecided)
		if _, err := s.RecordApprovalDecision(ctx, "req-3", DecisionExpired, "", "bridge restarted"); err != nil {
			t.Fatal(err)
		}

		open, err = s.OpenApprovals(ctx)
		if err != nil || approvalIDs(open) != "[req-2]" {
			t.Fatalf("OpenApprovals after decisions = %s, %v", approvalIDs(open), err)
		}
		forA, err := s.ApprovalsForConversation(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if approvalIDs(forA) != "[req-1 req-3]" {
			t.Fatalf("ApprovalsForConversation = %s", approvalIDs(forA))
		}
		if forA[0].Decision != DecisionDeny || forA[0].DecidedBy != "U9" || forA[1].Decision != DecisionExpired {
			t.Fatalf("audit log = %+v", forA)
		}
	})
}

func approvalIDs(as []Approval) string {
	var ids []string
	for _, a := range as {
		ids = append(ids, a.ID)
	}
	return fmt.Sprint(ids)
}

func TestApprovalDecisionRace(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		conv := storetest.NewConvAt(t, s, "bot", "C", "T")
		if _, err := s.RecordApprovalRequest(ctx, Approval{ID: "req", ConversationID: conv.ID, ToolName: "Bash"}); err != nil {
			t.Fatal(err)
		}
		const n = 8
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				_, errs[i] = s.RecordApprovalDecision(ctx, "req", DecisionAllow, fmt.Sprint("U", i), "")
			})
		}
		close(start)
		wg.Wait()
		winners := 0
		for i, err := range errs {
			switch {
			case err == nil:
				winners++
			case !errors.Is(err, ErrAlreadyDecided):
				t.Fatalf("decider %d: %v", i, err)
			}
		}
		if winners != 1 {
			t.Fatalf("%d decisions accepted, want 1", winners)
		}
	})
}

func TestApprovalErrors(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		conv := storetest.NewConvAt(t, s, "bot", "C", "T")
		if _, err := s.RecordApprovalRequest(ctx, Approval{ID: "req", ConversationID: conv.ID, ToolName: "Bash"}); err != nil {
			t.Fatal(err)
		}
		record := func(a Approval) error { _, err := s.RecordApprovalRequest(ctx, a); return err }
		decide := func(id string, d Decision) error { _, err := s.RecordApprovalDecision(ctx, id, d, "U", ""); return err }
		tests := []struct {
			name string
			err  error
			want error
		}{
			{"no id", record(Approval{ConversationID: conv.ID, ToolName: "Bash"}), sqldb.ErrInvalidArgument},
			{"no tool", record(Approval{ID: "x", ConversationID: conv.ID}), sqldb.ErrInvalidArgument},
			{"unknown conversation", record(Approval{ID: "x", ConversationID: "nope", ToolName: "Bash"}), sqldb.ErrNotFound},
			{"duplicate id", record(Approval{ID: "req", ConversationID: conv.ID, ToolName: "Bash"}), sqldb.ErrDuplicate},
			{"decide unknown", decide("nope", DecisionAllow), sqldb.ErrNotFound},
			{"empty decision", decide("req", ""), sqldb.ErrInvalidArgument},
			{"card of unknown", s.SetApprovalCardRef(ctx, "nope", "ref", ""), sqldb.ErrNotFound},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) { storetest.WantErrIs(t, tt.name, tt.err, tt.want) })
		}
		open, err := s.OpenApprovals(ctx)
		if err != nil || approvalIDs(open) != "[req]" {
			t.Fatalf("after refused calls OpenApprovals = %s, %v; want [req] still open", approvalIDs(open), err)
		}
	})
}
