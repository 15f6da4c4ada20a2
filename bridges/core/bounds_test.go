package core_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
)

// TestAgentEventOverflowAnnouncedAndRecovered: when a session's event queue
// drops events and then overflows (the agent package stops the process,
// which exits as a crash), the conversation says so, logs it, and the
// interrupted message is delivered again to a new process.
func TestAgentEventOverflowAnnouncedAndRecovered(t *testing.T) {
	var calls atomic.Int32
	script := func(s *bridgetest.FakeSession, m agentUserMessage) {
		if calls.Add(1) == 1 {
			s.Emit(agentLifecycle(m.UUID, "started"))
			s.Emit(streamjson.EventsDropped{Count: 3})
			s.Emit(streamjson.EventsDropped{Overflow: true, Err: errors.New("agent event queue overflow: test")})
			s.Kill()
			return
		}
		s.Reply(m, "recovered: "+strings.TrimSpace(m.Text[strings.LastIndex(m.Text, "\n")+1:]))
	}
	h := start(t, setup{script: script})
	k := key("T1")
	h.send(k, "m1", "alice", "hello")
	h.waitText(k, "fell too far behind the agent's output")
	h.waitText(k, "recovered: hello")
	h.waitLedgerFinal(k)
	logs := h.logs.String()
	for _, want := range []string{"agent progress events dropped", "dropped=3", "agent event queue overflowed"} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q", want)
		}
	}
}
