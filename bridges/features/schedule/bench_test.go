package schedule

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// BenchmarkSchedulerScan: one pass of the scheduler over n stored
// schedules none of which is due (what every wake-up costs: read them,
// parse each cron, find the next firing).
func BenchmarkSchedulerScan(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("schedules=%d", n), func(b *testing.B) {
			st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "bridge.db"), nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			c := New(Options{Config: &config.Config{}, Store: st})
			ctx := context.Background()
			now := time.Now()
			for i := range n {
				if _, err := st.AddSchedule(ctx, store.Schedule{Source: store.ScheduleFromChat, Name: fmt.Sprint(i),
					Key: store.ConversationKey{Bot: "bot", Channel: "C1"}, Cron: fmt.Sprintf("%d 9 * * 1-5", i%60), TZ: "Europe/Berlin",
					Prompt: "p", ConversationID: fmt.Sprint("conv", i%10), LastFireAt: now}); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				if next := c.fireDue(ctx, nil, now); next.IsZero() {
					b.Fatal("no next firing")
				}
			}
		})
	}
}
