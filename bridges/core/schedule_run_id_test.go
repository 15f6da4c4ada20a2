package core_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config/schedules"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// TestScheduledRunMessageIDIsTheSlot: a scheduled run's ledger message is
// keyed by the schedule and the slot it runs for (not the time it started),
// so a restart between enqueueing a run and recording it finds the same
// message again instead of running the slot twice. The run here starts
// late (caught up after a restart), so a key from the clock would differ.
func TestScheduledRunMessageIDIsTheSlot(t *testing.T) {
	clock := bridgetest.NewFakeClock(monday8)
	db := filepath.Join(t.TempDir(), "bridge.db")
	sched := &schedules.Schedule{Name: "daily", Bot: "bot", Channel: "C9", Cron: mustCron(t, "0 9 * * *", "UTC"),
		Prompt: "tick", Agent: "coder", CatchUp: true}
	h1 := start(t, setup{clock: clock, dbPath: db, configure: withSchedules(sched)})
	waitSchedulerArmed(t, clock)
	h1.stop()

	clock.Advance(90*time.Minute + 17*time.Second) // 09:00 passes while the bridge is down
	h2 := start(t, setup{clock: clock, dbPath: db, configure: withSchedules(sched)})
	channel := bridges.ConversationKey{Bot: "bot", Channel: "C9"}
	h2.waitText(channel, "pong: tick")
	h2.waitLedgerFinal(channel)
	var sc store.Schedule
	testkit.WaitUntil(t, "the run recorded", waitTimeout, func() bool {
		all, err := h2.st.ActiveSchedules(context.Background())
		if err != nil || len(all) != 1 {
			t.Fatalf("schedules = %v, %v", all, err)
		}
		sc = all[0]
		return sc.Runs > 0
	})
	m, err := h2.st.InboxByID(context.Background(), sc.LastInboxID)
	if err != nil {
		t.Fatal(err)
	}
	slot := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	if want := fmt.Sprintf("schedule-%d-%d", sc.ID, slot.Unix()); m.PlatformMsgID != want {
		t.Errorf("the run's message id = %q, want %q (schedule and slot)", m.PlatformMsgID, want)
	}
	if m.Origin != store.OriginSchedule || m.ScheduleID != sc.ID {
		t.Errorf("the run's message: origin %q schedule %d", m.Origin, m.ScheduleID)
	}
}
