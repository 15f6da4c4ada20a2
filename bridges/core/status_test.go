package core_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// ops lists the operations of calls.
func ops(calls []bridgetest.Call) string {
	var b strings.Builder
	for i, c := range calls {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(c.Op)
	}
	return b.String()
}

// A turn that answers within status_delay costs exactly one platform call:
// its reply. No indicator is shown, and none is cleared.
func TestQuickTurnIsOneCall(t *testing.T) {
	clock := bridgetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	h := start(t, setup{clock: clock, statusDelay: time.Second})
	k := key("T1")
	h.send(k, "m1", "alice", "hello")
	h.waitText(k, "pong: hello")
	h.waitLedgerFinal(k)
	clock.Advance(5 * time.Second) // the indicator's timer, had it not been cancelled
	// A second turn: its reply shows that the worker is past the first one.
	h.send(k, "m2", "alice", "again")
	h.waitText(k, "pong: again")
	h.waitLedgerFinal(k)
	if got := ops(h.plat.CallsOf(k)); got != "post post" {
		t.Errorf("calls for two quick turns: %q, want one post each", got)
	}
}

// A slower turn shows the indicator once status_delay has passed (not
// before), and clears it only after its reply is posted.
func TestIndicatorAfterStatusDelay(t *testing.T) {
	clock := bridgetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	release := make(chan struct{})
	script := func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted})
		<-release
		s.Reply(m, "done: "+m.Text)
	}
	h := start(t, setup{script: script, clock: clock, statusDelay: 1500 * time.Millisecond, noEdit: true})
	k := key("T1")
	h.send(k, "m1", "alice", "think")
	testkit.WaitUntil(t, "the indicator's timer", waitTimeout, func() bool { return clock.Pending() == 1 })
	clock.Advance(1499 * time.Millisecond) // fires nothing: the timer is due at 1.5 s
	if got := ops(h.plat.CallsOf(k)); got != "" {
		t.Fatalf("calls before status_delay: %q", got)
	}
	clock.Advance(time.Millisecond)
	testkit.WaitUntil(t, "the indicator", waitTimeout, func() bool { return h.plat.Typing(k) })
	close(release)
	h.waitText(k, "done: think")
	testkit.WaitUntil(t, "the indicator to clear", waitTimeout, func() bool { return !h.plat.Typing(k) })
	if got := ops(h.plat.CallsOf(k)); got != "typing-on post typing-off" {
		t.Errorf("calls = %q, want the indicator on, the reply, then off", got)
	}
}

// status_delay 0 shows the indicator as soon as the turn starts.
func TestIndicatorAtOnceWithZeroDelay(t *testing.T) {
	release := make(chan struct{})
	script := func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted})
		<-release
		s.Reply(m, "ok")
	}
	h := start(t, setup{script: script, clock: bridgetest.NewFakeClock(time.Unix(0, 0))})
	k := key("T1")
	h.send(k, "m1", "alice", "go")
	testkit.WaitUntil(t, "the indicator", waitTimeout, func() bool { return h.plat.Typing(k) })
	close(release)
	h.waitText(k, "ok")
	testkit.WaitUntil(t, "the indicator to clear", waitTimeout, func() bool { return !h.plat.Typing(k) })
}

var _ bridges.Typer = (*bridgetest.Platform)(nil)

// Where the indicator is free (Limits.FreeTyping: the web console), a turn
// shows it at once whatever status_delay says.
func TestFreeIndicatorAtOnce(t *testing.T) {
	release := make(chan struct{})
	script := func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted})
		<-release
		s.Reply(m, "ok")
	}
	lim := defaultLimits()
	lim.FreeTyping = true
	h := start(t, setup{script: script, limits: lim, statusDelay: time.Hour, clock: bridgetest.NewFakeClock(time.Unix(0, 0))})
	k := key("T1")
	h.send(k, "m1", "alice", "go")
	testkit.WaitUntil(t, "the indicator", waitTimeout, func() bool { return h.plat.Typing(k) })
	close(release)
	h.waitText(k, "ok")
}
