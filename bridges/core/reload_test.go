package core_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/features/reload"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// reloadModel makes a copy of the harness's config in force with the
// profile's model set to model, makes it current and applies it.
func (h *harness) reloadModel(model string, force bool) {
	h.t.Helper()
	old := h.live.Current()
	next := *old
	a := *old.Agents["coder"]
	a.Model = model
	next.Agents = map[string]*profile.Agent{"coder": &a}
	d := config.Compare(old, &next)
	if len(d.ProfilesRespawn) != 1 {
		h.t.Fatalf("diff %+v: want the profile's agents replaced", d)
	}
	h.live.Set(&next, time.Now(), "test")
	if err := reload.Apply(context.Background(), h.core, reload.Reload{Diff: d, Force: force}); err != nil {
		h.t.Fatal(err)
	}
}

// TestReloadWaitsForBackgroundTask: a reload that changes the profile's
// model tells a conversation whose agent runs a background task that its
// agent restarts once the task has finished, keeps answering it with the
// old process meanwhile, and replaces the process only after the task
// ended (and the agent had time to answer it): resuming the same session
// with the new model.
func TestReloadWaitsForBackgroundTask(t *testing.T) {
	clock := bridgetest.NewFakeClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	h := start(t, setup{live: true, clock: clock})
	k := key("T1")
	h.send(k, "m1", "alice", "start a build")
	h.waitText(k, "pong: start a build")
	s1 := h.session(1)
	s1.Emit(streamjson.TaskStarted{TaskID: "task-1", TaskType: "local_bash", Description: "build", Background: true})
	h.waitText(k, "Background task started")

	h.reloadModel("haiku", false)
	h.waitText(k, "once its background task has finished")
	h.send(k, "m2", "alice", "while it builds")
	h.waitText(k, "pong: while it builds") // the old process still answers
	if s1.Exited() || len(h.pool.Sessions()) != 1 {
		t.Fatal("the agent was replaced while its background task ran")
	}

	// The CLI answers the task's result in a turn of its own, which the
	// old process must still be there to play.
	s1.Emit(streamjson.TaskNotification{TaskID: "task-1", Status: "completed", Summary: "build ok"})
	for _, ev := range []streamjson.Event{streamjson.TextDelta{Text: "the build is done"}, streamjson.AssistantText{Text: "the build is done"},
		streamjson.Result{Subtype: "success", Text: "the build is done", SessionID: s1.Opts.SessionID, CostUSD: 0.001, NumTurns: 1}} {
		s1.Emit(ev)
	}
	h.waitText(k, "the build is done")
	testkit.WaitUntil(t, "the replacement's settle timer", waitTimeout, func() bool { return clock.Pending() > 0 })
	clock.Advance(5 * time.Second)
	testkit.WaitUntil(t, "the old agent stopped", waitTimeout, s1.Exited)

	h.send(k, "m3", "alice", "after the build")
	h.waitText(k, "pong: after the build")
	acq := h.pool.Acquisitions()
	if len(acq) != 2 {
		t.Fatalf("%d acquisitions, want 2", len(acq))
	}
	first, second := acq[0].Opts, acq[1].Opts
	if second.Model != "haiku" || !second.Resume || second.SessionID != first.SessionID {
		t.Errorf("replacement: model %q resume %v session %q; want haiku, resuming %q", second.Model, second.Resume, second.SessionID, first.SessionID)
	}
}

// TestReloadForceEndsBackgroundTask: with -now the agent is replaced at
// once although a background task runs, and the thread is told.
func TestReloadForceEndsBackgroundTask(t *testing.T) {
	h := start(t, setup{live: true})
	k := key("T1")
	h.send(k, "m1", "alice", "start a build")
	h.waitText(k, "pong: start a build")
	s1 := h.session(1)
	s1.Emit(streamjson.TaskStarted{TaskID: "task-1", Description: "build", Background: true})
	h.waitText(k, "Background task started")

	h.reloadModel("haiku", true)
	h.waitText(k, "which ended its background task")
	testkit.WaitUntil(t, "the old agent stopped", waitTimeout, s1.Exited)
	h.send(k, "m2", "alice", "again")
	h.waitText(k, "pong: again")
	if acq := h.pool.Acquisitions(); len(acq) != 2 || acq[1].Opts.Model != "haiku" || !acq[1].Opts.Resume {
		t.Errorf("acquisitions %+v: want a second, resuming on haiku", acq)
	}
}

// TestReloadNeverInterruptsATurn: a reload during a turn leaves the turn
// to finish; a message sent meanwhile waits for the new process.
func TestReloadNeverInterruptsATurn(t *testing.T) {
	release := make(chan struct{})
	script := func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		if strings.Contains(m.Text, "slow") {
			<-release
		}
		bridgetest.Pong(s, m)
	}
	h := start(t, setup{live: true, script: script})
	k := key("T1")
	h.send(k, "m1", "alice", "slow turn")
	s1 := h.session(1)
	if _, err := s1.WaitSent(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	h.reloadModel("haiku", false)
	h.send(k, "m2", "alice", "next one")
	time.Sleep(100 * time.Millisecond) // let the worker see both; nothing may happen to s1
	if s1.Exited() || len(s1.Sent()) != 1 {
		t.Fatalf("mid-turn: exited %v, %d messages sent to the old process", s1.Exited(), len(s1.Sent()))
	}
	close(release)
	h.waitText(k, "pong: slow turn")
	h.waitText(k, "pong: next one")
	if !s1.Exited() || len(s1.Sent()) != 1 {
		t.Errorf("after the turn: old process exited %v with %d messages; want it replaced after 1", s1.Exited(), len(s1.Sent()))
	}
	if acq := h.pool.Acquisitions(); len(acq) != 2 || acq[1].Opts.Model != "haiku" {
		t.Errorf("acquisitions %+v: want the next message on a new haiku process", acq)
	}
}

// TestReloadRemovedBotDrains: a bot removed by a reload lets the turn
// that runs finish (the thread is told), then stops its agent and its
// platform, and the conversation is told it has stopped.
func TestReloadRemovedBotDrains(t *testing.T) {
	release := make(chan struct{})
	script := func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		<-release
		bridgetest.Pong(s, m)
	}
	h := start(t, setup{live: true, script: script})
	k := key("T1")
	h.send(k, "m1", "alice", "long job")
	s1 := h.session(1)
	if _, err := s1.WaitSent(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	old := h.live.Current()
	next := *old
	next.Bots = nil
	h.live.Set(&next, time.Now(), "test")
	stopped := make(chan string, 1)
	if err := reload.Apply(context.Background(), h.core, reload.Reload{Diff: config.Compare(old, &next),
		Stopped: func(bot string, _ bridges.Platform) { stopped <- bot }}); err != nil {
		t.Fatal(err)
	}
	h.waitText(k, "the current turn finishes, then the bot stops here")
	select {
	case b := <-stopped:
		t.Fatalf("bot %s stopped mid-turn", b)
	case <-time.After(300 * time.Millisecond):
	}
	if s1.Exited() {
		t.Fatal("the agent stopped mid-turn")
	}
	close(release)
	h.waitText(k, "pong: long job")
	select {
	case b := <-stopped:
		if b != "bot" {
			t.Errorf("stopped %q", b)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the removed bot never stopped")
	}
	h.waitText(k, "has stopped")
	if !s1.Exited() {
		t.Error("the removed bot's agent still runs")
	}
}
