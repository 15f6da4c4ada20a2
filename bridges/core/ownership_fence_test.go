package core_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// leasedOwnership is a replica whose tenure of each conversation is a
// real lease in the store, taken once, as owner "replica-a"; by its own
// clock it always holds it (Holding), so only the fence can stop it.
type leasedOwnership struct {
	*fakeOwnership
	mu    sync.Mutex
	st    *store.Store
	lease *store.Lease
}

func (o *leasedOwnership) Claim(ctx context.Context, id string) (ownership.Tenure, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.lease == nil {
		l, err := o.st.AcquireLease(ctx, "conversation:"+id, "replica-a", time.Millisecond)
		if err != nil {
			return ownership.Tenure{}, err
		}
		o.lease = &l
	}
	l := *o.lease
	return ownership.Tenure{OK: true, Lease: &l}, nil
}

// TestFencedWorkerStops: another replica takes the conversation over while
// this one's agent is mid-turn. When the turn ends here, its reply is
// refused by the store's fence (ErrFenced): nothing is recorded, nothing
// is posted — not even the reply "directly", as after other store errors
// — and the conversation's worker and agent are stopped here at once.
func TestFencedWorkerStops(t *testing.T) {
	release := make(chan struct{})
	own := &leasedOwnership{fakeOwnership: &fakeOwnership{mine: true}}
	h := start(t, setup{ownership: own, script: func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		if strings.Contains(m.Text, "hold") {
			<-release
		}
		s.Reply(m, "answer: "+m.Text)
	}})
	own.mu.Lock()
	own.st = h.st
	own.mu.Unlock()
	k := key("T1")
	h.send(k, "m1", "alice", "hold on")
	sess := h.session(1)
	if _, err := sess.WaitSent(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	conv := h.conversation(k)
	time.Sleep(5 * time.Millisecond) // replica-a's lease expires
	if _, err := h.st.AcquireLease(ctxT(t), "conversation:"+conv.ID, "replica-b", time.Minute); err != nil {
		t.Fatal(err)
	}

	close(release)
	testkit.WaitUntil(t, "the conversation stopped here", waitTimeout, func() bool { return !h.core.LiveConversations()[conv.ID] })
	testkit.WaitUntil(t, "its agent stopped", waitTimeout, sess.Exited)
	time.Sleep(100 * time.Millisecond) // a post would follow at once
	for _, m := range h.plat.Messages(k) {
		if strings.Contains(m.Text, "answer:") {
			t.Errorf("posted %q after the lease moved", m.Text)
		}
	}
	pending, err := h.st.UndeliveredInbox(ctxT(t), conv.ID)
	if err != nil || len(pending) != 1 || pending[0].State != store.InboxSent {
		t.Errorf("ledger = %+v, %v; want the message sent, for the new holder to recover", pending, err)
	}
	if out, err := h.st.PendingOutboxForConversation(ctxT(t), conv.ID); err != nil || len(out) != 0 {
		t.Errorf("outbox = %+v, %v; want no reply recorded", out, err)
	}
	if tot, err := h.st.UsageTotals(ctxT(t), conv.ID); err != nil || tot.Count != 0 {
		t.Errorf("usage = %+v, %v; want none recorded", tot, err)
	}
	if !strings.Contains(h.logs.String(), "this replica lost its lease") {
		t.Error("the stop is not logged")
	}
}

// TestPausedWorkerWritesNothing: the replica is paused (SIGSTOP, a frozen
// VM) after the worker checked that it still holds the conversation and
// before its post leaves; when it runs again its lease has run out. The
// platform call carries the worker's write guard, which the adapter asks
// as the request leaves: the reply is withheld, and the worker stops.
func TestPausedWorkerWritesNothing(t *testing.T) {
	own := &fakeOwnership{mine: true}
	h := start(t, setup{ownership: own})
	k := key("T1")
	h.plat.FailPosts(func(_ bridges.ConversationKey, m bridges.Message) error {
		if strings.Contains(m.Text, "pong") {
			own.mu.Lock() // the pause: the lease ran out meanwhile
			own.mine = false
			own.mu.Unlock()
		}
		return nil
	})
	h.send(k, "m1", "alice", "hello")
	conv := h.conversation(k)
	testkit.WaitUntil(t, "the conversation stopped here", waitTimeout, func() bool { return !h.core.LiveConversations()[conv.ID] })
	for _, m := range h.plat.Messages(k) {
		if strings.Contains(m.Text, "pong") {
			t.Errorf("posted %q after the lease ran out", m.Text)
		}
	}
}
