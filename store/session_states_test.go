package store

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
)

// TestSessionStates: a session's state is stored, replaced and read back
// on both databases; a fenced write by a replica that lost the lease is
// refused and leaves the new holder's state.
func TestSessionStates(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		if _, err := s.GetSessionState(ctx, "s1"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("GetSessionState of nothing = %v, want ErrNotFound", err)
		}
		if err := s.PutSessionState(ctx, nil, SessionState{SessionID: "s1", ConversationID: "c1", Data: []byte{1, 2}}); err != nil {
			t.Fatal(err)
		}
		old, err := s.AcquireLease(ctx, "conversation:c1", "replica-a", time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutSessionState(ctx, &old, SessionState{SessionID: "s1", ConversationID: "c1", Data: []byte{0, 3, 255}}); err != nil {
			t.Fatalf("fenced put by the holder: %v", err)
		}
		cur := storetest.TakeOver(t, s, ErrLeaseHeld, "conversation:c1", "replica-b", time.Minute) // once expired on the database's clock
		if err := s.PutSessionState(ctx, &cur, SessionState{SessionID: "s1", ConversationID: "c1", Data: []byte("new")}); err != nil {
			t.Fatal(err)
		}
		err = s.PutSessionState(ctx, &old, SessionState{SessionID: "s1", ConversationID: "c1", Data: []byte("stale")})
		if !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("put by the replica that lost the lease = %v, want ErrLeaseLost", err)
		}
		got, err := s.GetSessionState(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Data, []byte("new")) || got.ConversationID != "c1" || got.UpdatedAt.IsZero() {
			t.Errorf("state = %+v, want the new holder's", got)
		}
	})
}
