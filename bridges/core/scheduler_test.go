package core_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/toolconv"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/schedules"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// monday8 is Monday 2026-01-05 08:00 UTC.
var monday8 = time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)

func mustCron(t *testing.T, expr, tz string) schedules.Cron {
	t.Helper()
	c, err := schedules.ParseCron(expr, tz)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// withSchedules adds schedules to the config.
func withSchedules(ss ...*schedules.Schedule) func(*config.Config) {
	return func(c *config.Config) { c.Schedules = append(c.Schedules, ss...) }
}

// waitSchedulerArmed waits until the scheduler has set its timer on the
// fake clock (before that, advancing the clock would not fire anything).
func waitSchedulerArmed(t *testing.T, clock *bridgetest.FakeClock) {
	t.Helper()
	testkit.WaitUntil(t, "the scheduler's timer", waitTimeout, func() bool { return clock.Pending() > 0 })
}

func headers(p *bridgetest.Platform, k bridges.ConversationKey, name string) []bridgetest.Msg {
	var out []bridgetest.Msg
	for _, m := range p.Messages(k) {
		if strings.HasPrefix(m.Text, "⏰ scheduled: "+name) {
			out = append(out, m)
		}
	}
	return out
}

// TestScheduleFiresInANewThread: a config schedule with new_thread fires at
// its time: the header starts a thread in its channel and the prompt is a
// turn of that thread's conversation, answered there.
func TestScheduleFiresInANewThread(t *testing.T) {
	clock := bridgetest.NewFakeClock(monday8)
	h := start(t, setup{clock: clock, configure: withSchedules(&schedules.Schedule{
		Name: "standup", Bot: "bot", Channel: "C9", Cron: mustCron(t, "0 9 * * 1-5", "UTC"),
		Prompt: "summarise CI", Agent: "coder", NewThread: true, CatchUp: true,
	})})
	waitSchedulerArmed(t, clock)
	clock.Advance(59 * time.Minute)
	if n := len(h.plat.Messages(bridges.ConversationKey{})); n != 0 {
		t.Fatalf("%d messages before the schedule's time:\n%s", n, h.plat.Dump())
	}
	clock.Advance(time.Minute)
	channel := bridges.ConversationKey{Bot: "bot", Channel: "C9"}
	head := h.waitText(channel, "⏰ scheduled: standup")
	thread := bridges.ConversationKey{Bot: "bot", Channel: "C9", Thread: head.Ref.ID}
	h.waitText(thread, "pong: summarise CI")
	s := h.session(1)
	if sent := s.Sent(); len(sent) != 1 || sent[0].Text != "summarise CI" {
		t.Errorf("agent got %+v, want the prompt once", sent)
	}
	if got := h.pool.Acquisitions()[0].Opts.MCPServers; got[toolconv.ServerName] == nil {
		t.Errorf("the run's agent has no bridge tools: %v", got)
	}
	h.waitLedgerFinal(thread)
}

// TestScheduleSkipsOverlapAndReports: a firing while the previous run is
// still going is skipped and said so in that run's conversation; the next
// firing after it finished runs again.
func TestScheduleSkipsOverlapAndReports(t *testing.T) {
	clock := bridgetest.NewFakeClock(monday8)
	release := make(chan struct{})
	h := start(t, setup{clock: clock, script: func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		<-release
		s.Reply(m, "done: "+m.Text)
	}, configure: withSchedules(&schedules.Schedule{
		Name: "report", Bot: "bot", Channel: "C9", Cron: mustCron(t, "0 9 * * *", "UTC"),
		Prompt: "write the report", Agent: "coder", CatchUp: true,
	})})
	channel := bridges.ConversationKey{Bot: "bot", Channel: "C9"}
	waitSchedulerArmed(t, clock)
	clock.Advance(time.Hour)
	h.waitText(channel, "⏰ scheduled: report")
	h.session(1).WaitSent(ctxT(t), 1)

	clock.Advance(24 * time.Hour) // Tuesday 9:00, Monday's run still going
	h.waitText(channel, "⏭ Skipped a scheduled run of `report`")
	close(release)
	h.waitText(channel, "done: write the report")
	h.waitLedgerFinal(channel)

	clock.Advance(24 * time.Hour) // Wednesday 9:00
	testkit.WaitUntil(t, "a second run", waitTimeout, func() bool { return len(headers(h.plat, channel, "report")) == 2 })
	h.waitLedgerFinal(channel)
	if got := len(h.session(1).Sent()); got != 2 {
		t.Errorf("agent got %d prompts, want 2 (Tuesday skipped)", got)
	}
}

// TestScheduleMissedRunOnceAfterRestart: firings missed while the bridge
// was down run once at the next start (catch_up), or not at all without it.
func TestScheduleMissedRunOnceAfterRestart(t *testing.T) {
	for _, catchUp := range []bool{true, false} {
		t.Run(map[bool]string{true: "catch_up", false: "no catch_up"}[catchUp], func(t *testing.T) {
			clock := bridgetest.NewFakeClock(monday8)
			db := filepath.Join(t.TempDir(), "bridge.db")
			sched := &schedules.Schedule{Name: "hourly", Bot: "bot", Channel: "C9", Cron: mustCron(t, "0 * * * *", "UTC"),
				Prompt: "tick", Agent: "coder", CatchUp: catchUp}
			h1 := start(t, setup{clock: clock, dbPath: db, configure: withSchedules(sched)})
			waitSchedulerArmed(t, clock)
			h1.stop()

			clock.Advance(5*time.Hour + 30*time.Minute) // five firings while down
			plat := bridgetest.New(defaultLimits())
			h2 := start(t, setup{clock: clock, dbPath: db, platform: plat, configure: withSchedules(sched)})
			channel := bridges.ConversationKey{Bot: "bot", Channel: "C9"}
			want := 0
			if catchUp {
				want = 1
				h2.waitText(channel, "pong: tick")
				h2.waitLedgerFinal(channel)
			} else {
				waitSchedulerArmed(t, clock)
			}
			if got := len(headers(plat, channel, "hourly")); got != want {
				t.Fatalf("%d scheduled runs after the restart, want %d:\n%s", got, want, plat.Dump())
			}
			var sc store.Schedule
			testkit.WaitUntil(t, "the firing recorded", waitTimeout, func() bool {
				all, err := h2.st.ActiveSchedules(context.Background())
				if err != nil || len(all) != 1 {
					t.Fatalf("schedules = %v, %v", all, err)
				}
				sc = all[0]
				return sc.Runs+sc.Skips > 0
			})
			if want := time.Date(2026, 1, 5, 13, 0, 0, 0, time.UTC); !sc.LastFireAt.Equal(want) {
				t.Errorf("last firing = %v, want the latest missed one %v", sc.LastFireAt, want)
			}
			if catchUp && (sc.Runs != 1 || sc.Skips != 0) || !catchUp && (sc.Skips != 1 || sc.Runs != 0) {
				t.Errorf("runs %d skips %d", sc.Runs, sc.Skips)
			}
			// The next firing runs as usual.
			clock.Advance(30 * time.Minute)
			testkit.WaitUntil(t, "the 14:00 run", waitTimeout, func() bool { return len(headers(plat, channel, "hourly")) == want+1 })
		})
	}
}

// TestChatScheduleCommands: a schedule made with !schedule add is listed,
// fires in its conversation, may be removed by its creator or an admin
// but nobody else, and chat schedules are held to a minimum interval.
func TestChatScheduleCommands(t *testing.T) {
	clock := bridgetest.NewFakeClock(monday8)
	h := start(t, setup{clock: clock, access: config.Access{Admins: []string{"root"}}, configure: withSchedules(&schedules.Schedule{
		Name: "from-config", Bot: "bot", Channel: "C1", Cron: mustCron(t, "@daily", "UTC"), Prompt: "x", Agent: "coder", CatchUp: true,
	})})
	k := key("T1")
	h.send(k, "m1", "alice", `!schedule add "0 9 * * *" tz=UTC check the build`)
	added := h.waitText(k, "🗓 Scheduled #2")
	if !strings.Contains(added.Text, "check the build") || !strings.Contains(added.Text, "UTC") || !strings.Contains(added.Text, "· here") {
		t.Errorf("confirmation = %q", added.Text)
	}
	h.send(k, "m2", "alice", `!schedule add "* * * * *" every minute`)
	h.waitText(k, "may run at most every 5 min")
	h.send(k, "m3", "alice", `!schedule add "0 25 * * *" nonsense`)
	h.waitText(k, "bad cron expression")
	h.send(k, "m4", "alice", `!schedule add 0 9 * * *`)
	h.waitText(k, "Usage: `!schedule add")

	h.send(k, "m5", "bob", "!schedule list")
	list := h.waitText(k, "Schedules in this channel** (2)")
	for _, want := range []string{"#1 `@daily`", "from-config", "config file", "#2 `0 9 * * *` UTC — check the build", "next Mon 5 Jan 09:00 UTC", "by @alice"} {
		if !strings.Contains(list.Text, want) {
			t.Errorf("list lacks %q:\n%s", want, list.Text)
		}
	}

	waitSchedulerArmed(t, clock)
	clock.Advance(time.Hour)
	h.waitText(k, "⏰ scheduled: check the build")
	h.waitText(k, "pong: check the build")

	h.send(k, "m6", "bob", "!schedule rm 2")
	h.waitText(k, "⛔ Only whoever made schedule #2")
	h.send(k, "m7", "bob", "!schedule rm 1")
	h.waitText(k, "comes from the config file")
	h.send(k, "m8", "alice", "!schedule rm 2")
	h.waitText(k, "🗑 Removed schedule #2")
	h.send(k, "m9", "alice", "!schedule rm 2")
	h.waitText(k, "There is no schedule #2.")
	h.send(k, "m10", "root", `!schedule add "@hourly" admin made`)
	h.waitText(k, "🗓 Scheduled #3")
	h.send(k, "m11", "root", "!schedule rm 3")
	h.waitText(k, "🗑 Removed schedule #3")
	h.send(k, "m12", "bob", "!schedule list")
	h.waitText(k, "Schedules in this channel** (1)")

	clock.Advance(24 * time.Hour)
	h.waitLedgerFinal(k)
	if got := len(headers(h.plat, k, "check the build")); got != 1 {
		t.Errorf("the removed schedule ran %d times, want once (before its removal)", got)
	}
}

// TestScheduleFailingFiringRetriedThenGivenUp: a firing the platform
// refuses is tried again after 1, 2 and 4 minutes, then given up (counted
// as skipped); the next firing runs normally.
func TestScheduleFailingFiringRetriedThenGivenUp(t *testing.T) {
	clock := bridgetest.NewFakeClock(monday8)
	plat := bridgetest.New(defaultLimits())
	var attempts atomic.Int32
	plat.FailPosts(func(k bridges.ConversationKey, m bridges.Message) error {
		if strings.HasPrefix(m.Text, "⏰ scheduled:") {
			attempts.Add(1)
			return errors.New("channel_not_found")
		}
		return nil
	})
	h := start(t, setup{clock: clock, platform: plat, configure: withSchedules(&schedules.Schedule{
		Name: "report", Bot: "bot", Channel: "C9", Cron: mustCron(t, "0 9 * * *", "UTC"),
		Prompt: "write the report", Agent: "coder", NewThread: true, CatchUp: true,
	})})
	waitSchedulerArmed(t, clock)
	clock.Advance(time.Hour)
	for i, wait := range []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute} {
		testkit.WaitUntil(t, fmt.Sprintf("attempt %d", i+1), waitTimeout, func() bool { return attempts.Load() == int32(i+1) })
		waitSchedulerArmed(t, clock)
		clock.Advance(wait)
	}
	testkit.WaitUntil(t, "the firing given up", waitTimeout, func() bool {
		all, err := h.st.ActiveSchedules(context.Background())
		return err == nil && len(all) == 1 && all[0].Skips == 1
	})
	clock.Advance(time.Hour)
	if got := attempts.Load(); got != 4 {
		t.Errorf("%d attempts, want 4", got)
	}
	plat.FailPosts(nil)
	clock.Advance(23 * time.Hour)
	h.waitText(bridges.ConversationKey{Bot: "bot", Channel: "C9"}, "⏰ scheduled: report")
}
