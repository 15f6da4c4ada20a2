package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
)

// TestHandoffAudit: hand-off events are kept with who, what, which
// conversation, when and from where, listed newest first; bad rows are
// refused; Prune removes the rows older than the cut-off and keeps the
// others, on both databases.
func TestHandoffAudit(t *testing.T) { kit.Each(t, testHandoffAudit) }

func testHandoffAudit(t *testing.T, s *Store) {
	ctx := context.Background()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clk := storetest.UseClock(s.db, start, time.Second)
	key := ConversationKey{Bot: "team", Channel: "C1", Thread: "1700.1"}
	events := []HandoffEvent{
		{Action: HandoffAttach, Request: "attach", Person: "ana", UserID: "UANA", ConversationID: "c1", Key: key, Remote: "127.0.0.1:5001"},
		{Action: HandoffDetach, Request: "attach", Person: "ana", UserID: "UANA", ConversationID: "c1", Key: key, Remote: "127.0.0.1:5001"},
		{Action: HandoffRefused, Request: "attach", Person: "bob", UserID: "UBOB", ConversationID: "c1", Key: key,
			Reason: "bob (UBOB) does not take part in conversation c1", Remote: "127.0.0.1:5002"},
		{Action: HandoffRefused, Request: "export", Reason: "unknown handoff token", Remote: "127.0.0.1:5003"},
	}
	for _, e := range events {
		if err := s.RecordHandoff(ctx, e); err != nil {
			t.Fatalf("RecordHandoff(%+v): %v", e, err)
		}
	}
	clk.Set(start.Add(48 * time.Hour))
	imp := HandoffEvent{Action: HandoffImport, Request: "import", Person: "ana", UserID: "UANA", ConversationID: "c2",
		Key: ConversationKey{Bot: "team", Channel: "C9", Thread: "1800.1"}, Remote: "[::1]:6000"}
	if err := s.RecordHandoff(ctx, imp); err != nil {
		t.Fatal(err)
	}
	got, err := s.HandoffAudit(ctx, 10)
	if err != nil || len(got) != 5 {
		t.Fatalf("HandoffAudit = %+v, %v; want 5 rows", got, err)
	}
	if at := got[0].At; at.Before(start.Add(48*time.Hour)) || at.After(start.Add(48*time.Hour+time.Minute)) {
		t.Errorf("newest row at %s, want the store clock's %s", at, start.Add(48*time.Hour))
	}
	imp.At = got[0].At
	if got[0] != imp {
		t.Errorf("newest row = %+v, want %+v", got[0], imp)
	}
	if r := got[2]; r.Action != HandoffRefused || r.Person != "bob" || r.Reason != events[2].Reason || r.Key != key || r.At.IsZero() {
		t.Errorf("refused row = %+v", r)
	}
	if r := got[4]; r.Action != HandoffAttach || r.Remote != "127.0.0.1:5001" || r.ConversationID != "c1" {
		t.Errorf("oldest row = %+v", r)
	}
	if one, _ := s.HandoffAudit(ctx, 1); len(one) != 1 {
		t.Errorf("limit 1 gave %d rows", len(one))
	}
	for _, bad := range []HandoffEvent{{Action: "stole", Request: "attach"}, {Action: HandoffAttach}} {
		if err := s.RecordHandoff(ctx, bad); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("RecordHandoff(%+v) = %v, want ErrInvalidArgument", bad, err)
		}
	}
	c, err := s.Prune(ctx, start.Add(time.Hour))
	if err != nil || c.Handoff != 4 {
		t.Fatalf("Prune = %+v, %v; want the 4 old hand-off rows deleted", c, err)
	}
	if left, _ := s.HandoffAudit(ctx, 10); len(left) != 1 || left[0].Action != HandoffImport {
		t.Errorf("after Prune: %+v, want the import only", left)
	}
}
