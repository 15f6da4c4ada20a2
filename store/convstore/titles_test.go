package convstore

import (
	"context"
	"testing"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
)

// A conversation's title is its first person's message still in the ledger,
// not a schedule's prompt and not an empty message (an image alone).
func TestConversationTitle(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		conv := storetest.NewConvAt(t, s, "slack", "C1", "T1")
		if got, err := s.ConversationTitle(ctx, conv.ID); err != nil || got != "" {
			t.Fatalf("title of an empty conversation = %q, %v; want \"\"", got, err)
		}
		for _, m := range []InboxMessage{
			{PlatformMsgID: "s1", Text: "Summarise CI", Origin: OriginSchedule},
			{PlatformMsgID: "m1", Text: ""},
			{PlatformMsgID: "m2", Text: "Why does the deploy fail?"},
			{PlatformMsgID: "m3", Text: "and the tests?"},
		} {
			m.ConversationID = conv.ID
			if _, _, err := s.Enqueue(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := s.ConversationTitle(ctx, conv.ID); err != nil || got != "Why does the deploy fail?" {
			t.Errorf("title = %q, %v; want the first person's message", got, err)
		}
	})
}
