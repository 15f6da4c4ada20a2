package core_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/store"
)

// TestOwnershipFirstTurnTakenOver: the replica running a conversation's
// first turn died in it — the session has its id but nothing was ever
// stored, and this replica has no transcript of it. Taking it over starts
// the session anew with its id at once (one agent, not a resume that is
// bound to fail and then a fresh one), says that the agent was restarted
// on another replica — not that the session "could not be resumed" — and
// answers the message.
func TestOwnershipFirstTurnTakenOver(t *testing.T) {
	own := &fakeOwnership{}
	h := start(t, setup{ownership: own})
	k := key("T1")
	h.send(k, "m1", "alice", "hello")
	conv := h.conversation(k)
	pending, err := h.st.UndeliveredInbox(ctxT(t), conv.ID)
	if err != nil || len(pending) != 1 {
		t.Fatalf("ledger = %+v, %v", pending, err)
	}
	// The earlier holder gave the conversation its session and sent it the
	// message, then died before the turn ended.
	session := uuid.NewString()
	if err := h.st.SetSessionID(ctxT(t), conv.ID, session); err != nil {
		t.Fatal(err)
	}
	if err := h.st.MarkInbox(ctxT(t), pending[0].ID, store.InboxSent, ""); err != nil {
		t.Fatal(err)
	}
	own.set(true, true)
	h.core.Poke(ctxT(t), conv.ID)
	h.waitText(k, "pong")
	h.waitLedgerFinal(k)
	acq := h.pool.Acquisitions()
	if len(acq) != 1 {
		t.Fatalf("%d agents started, want 1", len(acq))
	}
	if o := acq[0].Opts; o.Resume || o.SessionID != session {
		t.Errorf("agent started with resume=%v session %s; want session %s started anew", o.Resume, o.SessionID, session)
	}
	var told bool
	for _, m := range h.plat.Messages(k) {
		if strings.Contains(m.Text, "could not be resumed") || strings.Contains(m.Text, "does not remember") {
			t.Errorf("misleading notice: %q", m.Text)
		}
		told = told || strings.Contains(m.Text, "the agent was restarted on another replica") ||
			strings.Contains(m.Text, "The agent was restarted on another replica")
	}
	if !told {
		t.Errorf("the thread was not told that the agent was restarted on another replica; posts: %v", h.plat.Messages(k))
	}
}
