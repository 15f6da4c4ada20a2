package core_test

import (
	"strconv"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/store"
)

// TestScheduleRmOtherBotRefused: "!schedule rm" in one bot's chat cannot
// remove a schedule of another bot, even one made by the same user id in a
// channel of the same name: the reply says there is no such schedule and
// the schedule stays active.
func TestScheduleRmOtherBotRefused(t *testing.T) {
	h := start(t, setup{clock: bridgetest.NewFakeClock(monday8)})
	ctx := ctxT(t)
	other, err := h.st.AddSchedule(ctx, store.Schedule{Source: store.ScheduleFromChat, Name: "other bot's",
		Key: store.ConversationKey{Bot: "otherbot", Channel: "C1", Thread: "T1"}, Cron: "0 9 * * *", TZ: "UTC",
		Prompt: "x", CreatedBy: "alice", ConversationID: "elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	k := key("T1")
	h.send(k, "m1", "alice", "!schedule rm "+strconv.FormatInt(other.ID, 10))
	h.waitText(k, "There is no schedule #"+strconv.FormatInt(other.ID, 10)+".")
	sc, err := h.st.ScheduleByID(ctx, other.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !sc.Active() {
		t.Errorf("the other bot's schedule was removed by %q", sc.RemovedBy)
	}
}
