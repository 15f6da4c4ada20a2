package schedule_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/features/schedule"
	"github.com/agentbridge/agentbridge/bridges/features/schedule/schedreq"
	"github.com/agentbridge/agentbridge/store"
)

// TestFiringClaimedOnce: two schedulers on one store (two replicas) fire
// the same slot of a new_thread schedule; with a claim per firing only
// one starts it: one new thread, one header, one ledger message.
func TestFiringClaimedOnce(t *testing.T) {
	ctx := context.Background()
	cfg, c, plat := runCore(t)
	claim := func(owner string) func(context.Context, string) (bool, error) {
		return func(ctx context.Context, firing string) (bool, error) {
			_, err := c.Store.AcquireLease(ctx, firing, owner, time.Hour)
			if errors.Is(err, store.ErrLeaseHeld) {
				return false, nil
			}
			return err == nil, err
		}
	}
	a := schedule.New(schedule.Options{Config: cfg, Store: c.Store, Clock: c.Clock, Claim: claim("replica-a")})
	b := schedule.New(schedule.Options{Config: cfg, Store: c.Store, Clock: c.Clock, Claim: claim("replica-b")})
	sc, err := c.Store.AddSchedule(ctx, store.Schedule{Source: store.ScheduleFromChat, Name: "daily", NewThread: true,
		Key: store.ConversationKey{Bot: "bot", Channel: "C1"}, Cron: "0 9 * * *", TZ: "UTC",
		Prompt: "tick", CreatedBy: "alice", ConversationID: "conv"})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	slot := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	for _, s := range []*schedule.Scheduler{a, b} {
		if err := s.Fire(ctx, c, sc, slot, log); err != nil {
			t.Fatal(err)
		}
	}
	headers := 0
	for _, m := range plat.Messages(bridges.ConversationKey{Bot: "bot", Channel: "C1"}) {
		if strings.HasPrefix(m.Text, schedreq.Header+"daily") {
			headers++
		}
	}
	if headers != 1 {
		t.Errorf("%d run headers (new threads) for one slot fired by two replicas, want 1", headers)
	}
}
