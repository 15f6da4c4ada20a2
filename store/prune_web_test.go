package store

import (
	"context"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
)

// TestPruneWebConsole: Prune applies the retention to the web console's
// rows too (package webstore), in batches, and counts them.
func TestPruneWebConsole(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		clk := storetest.UseClock(s.db, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Minute)
		key := ConversationKey{Bot: "console", Channel: "ana", Thread: "t1"}
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(s.AddWebUpload(ctx, WebUpload{ID: "f1", Key: key, Name: "a.png", MimeType: "image/png", Data: []byte{1}}))
		for _, id := range []string{"m1", "m2", "m3"} {
			_, err := s.AddWebMessage(ctx, WebMessage{ID: id, Key: key, Author: "ana", Text: id})
			must(err)
		}
		must(s.RecordWebTool(ctx, WebTool{Key: key, ID: "tool", Name: "Bash", Input: `{}`}))
		cut := clk.Now()
		_, err := s.AddWebMessage(ctx, WebMessage{ID: "new", Key: key, Author: "ana", Text: "new"})
		must(err)
		s.pruneBatch = 2 // smaller than the backlog: batches must loop
		c, err := s.Prune(ctx, cut)
		must(err)
		if c.Web != 5 || c.Total() != 5 {
			t.Errorf("pruned %+v, want 5 web rows (3 messages, an upload, a tool call)", c)
		}
		msgs, err := s.WebMessages(ctx, key, 0, 0)
		must(err)
		if len(msgs) != 1 || msgs[0].ID != "new" {
			t.Errorf("left = %+v", msgs)
		}
	})
}
