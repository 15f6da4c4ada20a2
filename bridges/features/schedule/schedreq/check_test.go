package schedreq

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// TestCheck: a request is refused (ErrRefused, with the reason) for a bad
// cron, one that fires more often than MinGap or never, an empty prompt,
// or a conversation that has MaxPerConversation schedules already; a
// valid one passes and makes a row named after its prompt.
func TestCheck(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)
	key := bridges.ConversationKey{Bot: "bot", Channel: "C1", Thread: "T1"}
	req := func(cron, prompt string) Request {
		return Request{Source: store.ScheduleFromChat, Cron: cron, TZ: "UTC", Prompt: prompt, Key: key, ConvID: "conv", CreatedBy: "alice"}
	}
	for _, tc := range []struct{ cron, prompt, want string }{
		{"not a cron", "x", "schedule refused: "},
		{"* * * * *", "x", "fires every 1 min; schedules made in chat or by the agent may run at most every 5 min"},
		{"0 0 30 2 *", "x", "never fires"},
		{"0 9 * * *", "  ", "the prompt is empty"},
	} {
		if _, err := Check(ctx, st, now, req(tc.cron, tc.prompt)); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check(%q, %q) = %v, want a refusal saying %q", tc.cron, tc.prompt, err, tc.want)
		}
	}
	for i := range MaxPerConversation {
		r := req("*/5 * * * *", fmt.Sprintf("  summarise   run %d ", i))
		cr, err := Check(ctx, st, now, r)
		if err != nil {
			t.Fatalf("schedule %d: %v", i, err)
		}
		row := Row(r, cr, now)
		if row.Name != fmt.Sprintf("summarise run %d", i) || row.Prompt != strings.TrimSpace(r.Prompt) || !row.LastFireAt.Equal(now) {
			t.Errorf("Row = %+v", row)
		}
		if _, err := st.AddSchedule(ctx, row); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Check(ctx, st, now, req("0 9 * * *", "one more")); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "already has 10 schedules") {
		t.Errorf("Check past the cap = %v, want a refusal", err)
	}
}
