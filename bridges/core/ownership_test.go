package core_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// fakeOwnership says whether this replica holds a conversation and records
// what the core forwards.
type fakeOwnership struct {
	mu        sync.Mutex
	mine      bool
	recover   bool
	forwarded []string
	actions   []bridges.Action
	saved     []string
}

func (f *fakeOwnership) Claim(context.Context, string) (ownership.Tenure, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rec := f.mine && f.recover
	f.recover = false
	return ownership.Tenure{OK: f.mine, Recover: rec}, nil
}

func (f *fakeOwnership) Holding(string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mine
}

func (f *fakeOwnership) Forward(_ context.Context, id string, a *bridges.Action) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forwarded = append(f.forwarded, id)
	if a != nil {
		f.actions = append(f.actions, *a)
	}
}

func (f *fakeOwnership) SaveSession(_ context.Context, _, sessionID, _ string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.saved = append(f.saved, sessionID)
}

func (f *fakeOwnership) RestoreSession(context.Context, string, string, string) (string, error) {
	return "", nil
}

func (f *fakeOwnership) set(mine, recover bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mine, f.recover = mine, recover
}

// TestOwnershipHeldElsewhere: a message for a conversation another replica
// holds is recorded once and forwarded, and no agent starts here; a click
// is forwarded too. Once this replica takes the conversation over (a new
// tenure), the messages an earlier holder had sent to its agent go back to
// pending and are answered here, and the session is saved after the turn.
func TestOwnershipHeldElsewhere(t *testing.T) {
	own := &fakeOwnership{}
	h := start(t, setup{ownership: own})
	k := key("T1")
	h.send(k, "m1", "alice", "hello")
	h.send(k, "m1", "alice", "hello") // redelivered to this replica: a duplicate
	conv := h.conversation(k)
	pending, err := h.st.UndeliveredInbox(ctxT(t), conv.ID)
	if err != nil || len(pending) != 1 || pending[0].State != store.InboxPending {
		t.Fatalf("ledger = %+v, %v; want the message once, pending", pending, err)
	}
	if err := h.core.HandleAction(ctxT(t), bridges.Action{Key: k, CardID: "card-1", Choice: "allow", UserID: "alice"}); err != nil {
		t.Fatal(err)
	}
	own.mu.Lock()
	forwarded, actions := len(own.forwarded), len(own.actions)
	own.mu.Unlock()
	if forwarded != 2 || actions != 1 {
		t.Errorf("forwarded %d signals with %d clicks, want 2 (message, click) with 1", forwarded, actions)
	}
	if n := len(h.pool.Acquisitions()); n != 0 {
		t.Fatalf("%d agents started for a conversation held elsewhere", n)
	}
	// The earlier holder had sent it to its agent when it died.
	if err := h.st.MarkInbox(ctxT(t), pending[0].ID, store.InboxSent, ""); err != nil {
		t.Fatal(err)
	}
	own.set(true, true)
	h.core.Poke(ctxT(t), conv.ID)
	if m := h.waitText(k, "previous turn was interrupted"); !strings.Contains(m.Text, "hello") {
		t.Errorf("answer = %q, want the message delivered again", m.Text)
	}
	h.waitLedgerFinal(k)
	testkit.WaitUntil(t, "the session saved after the turn", waitTimeout, func() bool {
		own.mu.Lock()
		defer own.mu.Unlock()
		return len(own.saved) > 0 && own.saved[0] == h.conversation(k).SessionID
	})
	if live := h.core.LiveConversations(); !live[conv.ID] {
		t.Errorf("live conversations = %v", live)
	}
	h.core.Drop(ctxT(t), conv.ID)
	if live := h.core.LiveConversations(); live[conv.ID] {
		t.Error("the conversation still runs after Drop")
	}
}
