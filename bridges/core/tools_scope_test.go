package core_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/store"
)

// TestAgentCancelScheduleOtherConversationRefused: the agent's
// cancel_schedule, run by the real CLI, refuses a schedule of another
// conversation of the same bot and channel; the schedule stays active.
func TestAgentCancelScheduleOtherConversationRefused(t *testing.T) {
	t.Parallel()
	l := startLive(t, liveSetup{})
	ctx := ctxT(t)
	other, err := l.st.AddSchedule(ctx, store.Schedule{Source: store.ScheduleFromAgent, Name: "theirs",
		Key: store.ConversationKey{Bot: "bot", Channel: "C1", Thread: "theirs"}, Cron: "0 9 * * *", TZ: "UTC",
		Prompt: "x", CreatedBy: "alice", ConversationID: "another-conversation"})
	if err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(other.ID, 10)
	k := key("mine")
	l.send(k, "m1", "alice", `[tool mcp__bridge__cancel_schedule {"id":`+id+`}]`)
	reply := l.waitReply(k, "tool said:")
	l.waitFinal(k)
	if want := "tool said: ERROR: this conversation has no schedule #" + id; !strings.Contains(reply.Text, want) {
		t.Errorf("reply = %q, want %q", reply.Text, want)
	}
	sc, err := l.st.ScheduleByID(ctx, other.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !sc.Active() {
		t.Errorf("the other conversation's schedule was cancelled by %q", sc.RemovedBy)
	}
}
