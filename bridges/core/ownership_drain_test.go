package core_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/store"
)

// TestDrainFinishesTurn: Drain (a replica's graceful stop) waits for the
// running turn, which is answered here; a message arriving meanwhile is
// recorded but not written to the agent (the next holder gets it); with
// nothing running Drain returns at once, and it gives up when its context
// ends.
func TestDrainFinishesTurn(t *testing.T) {
	release := make(chan struct{})
	own := &fakeOwnership{mine: true}
	h := start(t, setup{ownership: own, script: func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		if strings.Contains(m.Text, "hold") {
			<-release
		}
		s.Reply(m, "answer: "+m.Text)
	}})
	k := key("T1")
	h.send(k, "m1", "alice", "hold on")
	if _, err := h.session(1).WaitSent(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}

	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	h.core.Drain(short)
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("Drain returned after %s with a turn running, want its context's end", d)
	}

	drained := make(chan struct{})
	go func() { defer close(drained); h.core.Drain(ctxT(t)) }()
	h.send(k, "m2", "alice", "next one")
	time.Sleep(300 * time.Millisecond) // time to (wrongly) write m2 to the agent
	select {
	case <-drained:
		t.Fatal("Drain returned while the turn ran")
	default:
	}
	close(release)
	h.waitText(k, "answer: hold on")
	select {
	case <-drained:
	case <-time.After(waitTimeout):
		t.Fatal("Drain did not return after the turn ended")
	}
	if sent := h.session(1).Sent(); len(sent) != 1 {
		t.Errorf("the agent got %d messages while draining, want only the running one", len(sent))
	}
	pending, err := h.st.UndeliveredInbox(ctxT(t), h.conversation(k).ID)
	if err != nil || len(pending) != 1 || pending[0].PlatformMsgID != "m2" || pending[0].State != store.InboxPending {
		t.Errorf("ledger = %+v, %v; want m2 pending for the next holder", pending, err)
	}
	start = time.Now()
	h.core.Drain(ctxT(t))
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Drain with nothing running took %s", d)
	}
}
