package webstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/convstore"
	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

// TestWebToolsAndPrune: a tool call is kept with its input, then its
// result (a result without its call is ignored, text beyond 256 KiB cut),
// only in its own conversation; Prune removes old calls in batches.
func TestWebToolsAndPrune(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		clk := storetest.UseClock(s.db, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Minute)
		key := convstore.ConversationKey{Bot: "console", Channel: "ana", Thread: "t1"}
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, id := range []string{"a", "b", "c", "d", "e"} {
			must(s.RecordWebTool(ctx, WebTool{Key: key, ID: id, Name: "Bash", Input: `{"command":"ls ` + id + `"}`}))
		}
		must(s.RecordWebTool(ctx, WebTool{Key: key, ID: "a", Output: strings.Repeat("x", maxWebToolText+1), IsError: true, Done: true}))
		must(s.RecordWebTool(ctx, WebTool{Key: key, ID: "ghost", Output: "no call", Done: true}))
		got, err := s.WebTool(ctx, key, "a")
		must(err)
		if got.Name != "Bash" || got.Input != `{"command":"ls a"}` || !got.IsError || !got.Done ||
			!strings.HasSuffix(got.Output, "(cut at 256 KiB)") || len(got.Output) > maxWebToolText+32 {
			t.Errorf("tool a = %+v (output %d bytes)", got.Key, len(got.Output))
		}
		if got, err := s.WebTool(ctx, key, "b"); err != nil || got.Done || got.IsError || got.Output != "" {
			t.Errorf("tool b = %+v, %v", got, err)
		}
		_, err = s.WebTool(ctx, key, "ghost")
		storetest.WantErrIs(t, "result without a call", err, sqldb.ErrNotFound)
		_, err = s.WebTool(ctx, convstore.ConversationKey{Bot: "console", Channel: "bob", Thread: "t1"}, "a")
		storetest.WantErrIs(t, "another channel", err, sqldb.ErrNotFound)

		cut := clk.Now()
		must(s.RecordWebTool(ctx, WebTool{Key: key, ID: "new", Name: "Read", Input: `{}`}))
		n, err := Prune(ctx, s.db, cut.UnixMilli(), 2) // batches smaller than the backlog must loop
		must(err)
		if n != 5 {
			t.Errorf("pruned web rows = %d, want 5 (tool calls a to e)", n)
		}
		if _, err := s.WebTool(ctx, key, "new"); err != nil {
			t.Errorf("recent tool call pruned: %v", err)
		}
		_, err = s.WebTool(ctx, key, "e")
		storetest.WantErrIs(t, "pruned tool call", err, sqldb.ErrNotFound)
	})
}
