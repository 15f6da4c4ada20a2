package core_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestStopBeforeTheTurnBegins: !stop arrives after the message was sent
// to the agent but before the CLI began it (on a loaded machine Stop is
// pressed right after Send). The interrupt then stops nothing — the CLI
// begins the message afterwards — so the core interrupts the turn again
// as it begins: the answer is "Stopped", not the whole turn.
func TestStopBeforeTheTurnBegins(t *testing.T) {
	begin := make(chan struct{})
	interrupts := func(s *bridgetest.FakeSession) int {
		n := 0
		for _, c := range s.Calls() {
			if c == "interrupt" {
				n++
			}
		}
		return n
	}
	h := start(t, setup{script: func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		if !strings.Contains(m.Text, "long story") {
			s.Reply(m, "pong: "+m.Text)
			return
		}
		<-begin // queued in the CLI: not begun yet
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted})
		s.Emit(streamjson.TextDelta{Text: "once upon a time"})
		// The CLI stops the turn only if an interrupt comes once it runs.
		deadline := time.Now().Add(waitTimeout)
		for interrupts(s) < 2 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if interrupts(s) >= 2 {
			s.Emit(streamjson.Result{Subtype: "error_during_execution", IsError: true, SessionID: s.Opts.SessionID})
			s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleCancelled})
			return
		}
		s.Emit(streamjson.Result{Subtype: "success", Text: "once upon a time, the whole story", SessionID: s.Opts.SessionID})
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleCompleted})
	}})
	k := key("T1")
	h.send(k, "m1", "alice", "a long story")
	if _, err := h.session(1).WaitSent(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	h.send(k, "m2", "alice", "!stop")
	testkit.WaitUntil(t, "the first interrupt", waitTimeout, func() bool { return interrupts(h.session(1)) == 1 })
	close(begin)
	h.plat.WaitFor(t, k, waitTimeout, "the stopped turn", func(m bridgetest.Msg) bool { return strings.Contains(m.Text, "Stopped") })
	if slices.ContainsFunc(h.plat.Messages(k), func(m bridgetest.Msg) bool { return strings.Contains(m.Text, "the whole story") }) {
		t.Error("the turn ran whole although !stop came before it began")
	}
}
