package core_test

// Acceptance tests of the agent's bridge tools and of schedules, with the
// real Claude Code CLI against the fake model.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config/schedules"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// postIndex returns the position of the first message containing sub.
func postIndex(ms []bridgetest.Msg, sub string) int {
	return slices.IndexFunc(ms, func(m bridgetest.Msg) bool { return strings.Contains(m.Text, sub) })
}

// TestAcceptanceAgentTools: the agent's bridge tools round-trip through the
// real CLI without a permission card: send_message called when a
// background task ends posts after the turn that started it has ended;
// send_file posts an attachment and refuses paths outside the workdir;
// schedule (after a person approved its card), list_schedules and
// cancel_schedule act on the conversation.
// Every call is counted.
func TestAcceptanceAgentTools(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	l := startLive(t, liveSetup{metrics: metrics.New(reg)})
	k := key("tools")

	// send_message from the turn the CLI starts when a background job ends.
	l.send(k, "m1", "alice", `[bgbash sleep 1] [ondone mcp__bridge__send_message {"text":"🎉 the build finished"}]`)
	l.waitReply(k, "started in background")
	l.waitLive(k, "🎉 the build finished")
	l.waitReply(k, "tool said: Posted in the conversation.")
	ms := l.plat.Messages(k)
	// The message is a post of its own holding the text alone (the turn's
	// live message may also show the call, as a tool line).
	turnEnd := postIndex(ms, "started in background")
	sent := slices.IndexFunc(ms, func(m bridgetest.Msg) bool { return m.Text == "🎉 the build finished" })
	if turnEnd < 0 || sent < turnEnd {
		t.Errorf("the message alone (post %d) did not come after the first turn's reply (post %d):\n%s", sent, turnEnd, l.plat.Dump())
	}

	// send_file: an attachment; a path outside the workdir is refused.
	if err := os.WriteFile(filepath.Join(l.workdir, "report.csv"), []byte("a,b\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l.send(k, "m2", "alice", `[tool mcp__bridge__send_file {"path":"report.csv","comment":"the numbers"}]`)
	l.waitReply(k, "tool said: Posted report.csv (8 B)")
	file := l.plat.WaitFor(t, k, liveTimeout, "the attachment", func(m bridgetest.Msg) bool { return m.File != nil })
	if file.File.Name != "report.csv" || string(file.File.Data) != "a,b\n1,2\n" || file.Text != "the numbers" {
		t.Errorf("attachment = %+v (text %q)", file.File, file.Text)
	}
	l.send(k, "m3", "alice", `[tool mcp__bridge__send_file {"path":"../../../etc/passwd"}]`)
	l.waitReply(k, "tool said: ERROR: ../../../etc/passwd is outside the working directory")

	// schedule (approved on its card by the turn's requester),
	// list_schedules, cancel_schedule.
	l.send(k, "m4", "alice", `[tool mcp__bridge__schedule {"cron":"0 7 * * 1-5","tz":"UTC","prompt":"check the nightly build","name":"nightly"}]`)
	l.waitReply(k, "tool said: Asked the people in this conversation to approve the schedule")
	card := l.plat.WaitFor(t, k, liveTimeout, "the schedule's card", func(m bridgetest.Msg) bool {
		return m.CardID != "" && strings.Contains(m.Text, "The agent asks for a schedule")
	})
	if _, err := l.plat.Click(ctxT(t), k, card.CardID, bridges.ChoiceAllow, "alice", "alice"); err != nil {
		t.Fatal(err)
	}
	l.waitLive(k, "✅ Created by")
	scheds, err := l.st.SchedulesOfConversation(ctxT(t), l.conversation(k).ID)
	if err != nil || len(scheds) != 1 || scheds[0].Source != store.ScheduleFromAgent || scheds[0].Prompt != "check the nightly build" ||
		scheds[0].CreatedBy != "alice" || scheds[0].Key != store.ConversationKey(k) {
		t.Fatalf("stored schedules = %+v, %v", scheds, err)
	}
	l.send(k, "m5", "alice", `[tool mcp__bridge__list_schedules]`)
	l.waitReply(k, "prompt: check the nightly build")
	l.send(k, "m6", "alice", `[tool mcp__bridge__cancel_schedule {"id":1}]`)
	l.waitReply(k, "tool said: Schedule #1 cancelled.")
	l.send(k, "m7", "alice", `[tool mcp__bridge__schedule {"cron":"* * * * *","prompt":"spam"}]`)
	l.waitReply(k, "tool said: ERROR: * * * * * fires every 1 min; schedules made in chat or by the agent may run at most every 5 min")
	l.waitFinal(k)

	for _, m := range l.plat.Messages(k) {
		if m.CardID != "" && m.CardID != card.CardID {
			t.Errorf("a bridge tool asked for permission: %q", m.Text)
		}
	}
	const calls = "agentbridge_agent_tool_calls_total"
	for _, tool := range []string{"send_message", "send_file", "schedule", "list_schedules", "cancel_schedule"} {
		if got := testkit.CounterValue(t, reg, calls, map[string]string{"bot": "bot", "tool": tool, "outcome": "ok"}); got != 1 {
			t.Errorf("ok calls of %s = %v, want 1", tool, got)
		}
	}
	if got := testkit.CounterValue(t, reg, calls, map[string]string{"outcome": "refused"}); got != 2 {
		t.Errorf("refused calls = %v, want 2", got)
	}
	if logs := l.logs.String(); strings.Count(logs, `msg="agent tool call"`) != 7 {
		t.Errorf("logged %d tool calls, want 7", strings.Count(logs, `msg="agent tool call"`))
	}
}

// TestAcceptanceSchedules: a chat-made schedule fires (fake clock) into its
// conversation and a config schedule into a new thread of its channel, each
// as a turn of the real agent; after a restart the chat schedule, kept only
// in the database, catches up once on the firings missed while down, the
// config schedule without catch_up does not; the chat schedule is listed
// and removed.
func TestAcceptanceSchedules(t *testing.T) {
	t.Parallel()
	testkit.RequireClaude(t)
	clock := bridgetest.NewFakeClock(time.Date(2026, 1, 5, 8, 30, 0, 0, time.UTC)) // Monday
	schedules := withSchedules(&schedules.Schedule{Name: "standup", Bot: "bot", Channel: "C7", Cron: mustCron(t, "0 9 * * *", "UTC"),
		Prompt: "standup summary", Agent: "coder", NewThread: true, CatchUp: false})
	shared := liveSetup{srv: fakemodel.New(t), dbPath: filepath.Join(t.TempDir(), "bridge.db"), home: t.TempDir(),
		workdir: filepath.Join(t.TempDir(), "work"), clock: clock, configure: schedules}
	k := key("daily")
	channel := bridges.ConversationKey{Bot: "bot", Channel: "C7"}

	shared.platform = bridgetest.New(defaultLimits())
	a := startLive(t, shared)
	a.send(k, "m1", "alice", `!schedule add "0 9 * * *" tz=UTC [echo-history] daily check`)
	a.waitLive(k, "🗓 Scheduled #2")
	waitSchedulerArmed(t, clock)
	clock.Advance(30 * time.Minute) // 09:00
	a.waitLive(k, "⏰ scheduled: [echo-history] daily check")
	a.waitReply(k, "history: (none)")
	head := a.waitLive(channel, "⏰ scheduled: standup")
	thread := bridges.ConversationKey{Bot: "bot", Channel: "C7", Thread: head.Ref.ID}
	a.waitReply(thread, "pong: standup summary")
	a.waitFinal(k)
	a.waitFinal(thread)
	a.stop()

	clock.Advance(47*time.Hour + 30*time.Minute) // Tuesday's 09:00 passes while the bridge is down; now Wednesday 08:30
	shared.platform = bridgetest.New(defaultLimits())
	b := startLive(t, shared)
	// The chat schedule catches up once, in the same conversation, which
	// the agent still remembers (its session resumed).
	b.waitLive(k, "⏰ scheduled: [echo-history] daily check")
	b.waitReply(k, "history: [echo-history] daily check")
	b.waitFinal(k)
	if got := len(headers(b.plat, k, "[echo-history]")); got != 1 {
		t.Errorf("the chat schedule ran %d times after the restart, want 1:\n%s", got, b.plat.Dump())
	}
	if got := len(headers(b.plat, channel, "standup")); got != 0 {
		t.Errorf("the config schedule without catch_up ran %d times after the restart", got)
	}
	b.send(k, "m2", "bob", "!schedule list")
	list := b.waitLive(k, "Schedules in this channel** (1)")
	if !strings.Contains(list.Text, "#2 `0 9 * * *` UTC — [echo-history] daily check") || !strings.Contains(list.Text, "next Wed 7 Jan 09:00 UTC") {
		t.Errorf("list = %q", list.Text)
	}
	b.send(k, "m3", "alice", "!schedule rm 2")
	b.waitLive(k, "🗑 Removed schedule #2")
	b.send(k, "m4", "alice", "!schedule list")
	b.waitLive(k, "No schedules in this channel")
	b.waitFinal(k)
}
