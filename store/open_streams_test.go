package store

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestOpenStreams: a conversation's latest stream is recorded, replaced
// and read back on both databases; forgetting it names the message, so a
// later stream's record stays.
func TestOpenStreams(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		if _, err := s.OpenStreamOf(ctx, "c1"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("OpenStreamOf of nothing = %v, want ErrNotFound", err)
		}
		for _, m := range []string{"100.1", "100.2"} {
			if err := s.PutOpenStream(ctx, OpenStream{ConversationID: "c1", Channel: "C1", Thread: "99.0", MessageID: m}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.PutOpenStream(ctx, OpenStream{ConversationID: "c2", Channel: "D1", MessageID: "7.0", ReplyID: "r1"}); err != nil {
			t.Fatal(err)
		}
		if os, err := s.OpenStreamOf(ctx, "c2"); err != nil || os.ReplyID != "r1" {
			t.Fatalf("OpenStreamOf = %+v, %v; want its reply r1", os, err)
		}
		os, err := s.OpenStreamOf(ctx, "c1")
		if err != nil || os.MessageID != "100.2" || os.Channel != "C1" || os.Thread != "99.0" || os.StartedAt.IsZero() || os.ReplyID != "" {
			t.Fatalf("OpenStreamOf = %+v, %v; want the later stream", os, err)
		}
		if ids, err := s.ConversationsWithOpenStreams(ctx); err != nil || !slices.Equal(ids, []string{"c1", "c2"}) {
			t.Fatalf("ConversationsWithOpenStreams = %v, %v", ids, err)
		}
		if err := s.DeleteOpenStream(ctx, "c1", "100.1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.OpenStreamOf(ctx, "c1"); err != nil {
			t.Fatalf("forgetting an earlier stream dropped the later one: %v", err)
		}
		if err := s.DeleteOpenStream(ctx, "c1", "100.2"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.OpenStreamOf(ctx, "c1"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("after forgetting: %v, want ErrNotFound", err)
		}
	})
}
