package core_test

import (
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// TestResultFinishesStartedMessages: the result of a turn records the
// messages it handled as finished with its reply, without waiting for the
// CLI's receipts that follow it: completed, or cancelled when !stop
// interrupted the turn; a receipt that comes later changes nothing.
func TestResultFinishesStartedMessages(t *testing.T) {
	h := start(t, setup{script: toolScript})
	k := key("T1")
	h.send(k, "m1", "alice", "hang")
	s := h.session(1)
	h.waitStarted(k)
	s.Emit(streamjson.Result{Subtype: "success", Text: "done at last", SessionID: s.Opts.SessionID})
	h.waitText(k, "done at last")
	h.waitLedgerFinal(k)
	conv := h.conversation(k)
	if st := msgState(t, h.st, conv.ID, "m1"); st != store.InboxCompleted {
		t.Fatalf("answered message = %s, want completed", st)
	}

	h.send(k, "m2", "alice", "hang")
	h.waitStarted(k)
	sent := s.Sent()
	h.send(k, "c1", "alice", "!stop")
	testkit.WaitUntil(t, "an interrupt", waitTimeout, func() bool { return strings.Contains(strings.Join(s.Calls(), ","), "interrupt") })
	s.Emit(streamjson.Result{Subtype: "error_during_execution", IsError: true, SessionID: s.Opts.SessionID})
	h.waitText(k, "Stopped.")
	h.waitLedgerFinal(k)
	if st := msgState(t, h.st, conv.ID, "m2"); st != store.InboxCancelled {
		t.Fatalf("stopped message = %s, want cancelled", st)
	}

	// Late receipts change nothing; the conversation goes on.
	s.Emit(streamjson.Lifecycle{UUID: sent[0].UUID, State: streamjson.LifecycleCancelled})
	s.Emit(streamjson.Lifecycle{UUID: sent[1].UUID, State: streamjson.LifecycleCompleted})
	h.send(k, "m3", "alice", "still there?")
	h.waitText(k, "pong: still there?")
	h.waitLedgerFinal(k)
	for id, want := range map[string]store.InboxState{"m1": store.InboxCompleted, "m2": store.InboxCancelled, "m3": store.InboxCompleted} {
		if st := msgState(t, h.st, conv.ID, id); st != want {
			t.Errorf("%s = %s, want %s", id, st, want)
		}
	}
	if strings.Contains(h.logs.String(), "update ledger") {
		t.Errorf("a late receipt tried to change the ledger:\n%s", h.logs.String())
	}
}

// waitStarted waits for a new live message of a "hang" turn: the worker
// has taken the message's started receipt, which comes before.
func (h *harness) waitStarted(k bridges.ConversationKey) {
	h.t.Helper()
	seen := make(map[string]bool)
	for _, m := range h.plat.Messages(k) {
		seen[m.Ref.ID] = true
	}
	h.plat.WaitFor(h.t, k, waitTimeout, "a new live message", func(m bridgetest.Msg) bool {
		return !seen[m.Ref.ID] && strings.Contains(m.Text, "working on it")
	})
}
