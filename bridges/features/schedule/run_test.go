package schedule_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/features/schedule"
	"github.com/agentbridge/agentbridge/bridges/features/schedule/schedreq"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/store"
)

// TestScheduledRunSameSlotOnce: starting the run of one schedule for the
// same slot twice (as a restart between enqueueing a run and recording it
// does) records one ledger message and announces the run once; another
// slot is a new run.
func TestScheduledRunSameSlotOnce(t *testing.T) {
	ctx := context.Background()
	cfg, c, plat := runCore(t)
	s := schedule.New(schedule.Options{Config: cfg, Store: c.Store, Clock: c.Clock})
	sc, err := c.Store.AddSchedule(ctx, store.Schedule{Source: store.ScheduleFromChat, Name: "daily",
		Key: store.ConversationKey{Bot: "bot", Channel: "C1", Thread: "T1"}, Cron: "0 9 * * *", TZ: "UTC",
		Prompt: "tick", CreatedBy: "alice", ConversationID: "conv"})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	slot := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	first, err := s.StartRun(ctx, c, sc, slot, log)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.StartRun(ctx, c, sc, slot, log)
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Errorf("the same slot started twice gave ledger messages %s and %s, want one", first, again)
	}
	next, err := s.StartRun(ctx, c, sc, slot.Add(24*time.Hour), log)
	if err != nil {
		t.Fatal(err)
	}
	if next == first {
		t.Errorf("the next day's run reused the ledger message %s", first)
	}
	headers := 0
	for _, m := range plat.Messages(bridges.ConversationKey(sc.Key)) {
		if strings.HasPrefix(m.Text, schedreq.Header+"daily") {
			headers++
		}
	}
	if headers != 2 {
		t.Errorf("%d run headers posted for two slots, want 2: %v", headers, plat.Messages(bridges.ConversationKey(sc.Key)))
	}
}

// runCore runs a core with one Slack-shaped bot "bot" (agent "coder") on
// a test platform, and waits until the core runs the platform.
func runCore(t *testing.T) (*config.Config, *bridgetest.Core, *bridgetest.Platform) {
	t.Helper()
	cfg := &config.Config{
		Agents: map[string]*profile.Agent{"coder": {Name: "coder", Command: "claude", MaxLive: 1}},
		Bots:   []*config.Bot{{Name: "bot", Platform: "slack", Agent: "coder"}},
	}
	plat := bridgetest.New(bridges.Limits{})
	c := bridgetest.RunCore(t, cfg, map[string]bridges.Platform{"bot": plat}, nil)
	wait, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := plat.Handler(wait); err != nil { // the core runs the platform
		t.Fatal(err)
	}
	return cfg, c, plat
}
