package replica

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// startPinned starts a replica whose bot "phone" follows the lease
// "platform:whatsapp:phone" (as bridges/app pins WhatsApp bots).
func startPinned(t *testing.T, st *store.Store, lease time.Duration) (*Replica, *fakeCore) {
	t.Helper()
	r, c, _ := startReplicaWith(t, st, Options{Store: st, Lease: lease, Pin: func(bot string) string {
		return "platform:whatsapp:" + bot
	}})
	return r, c
}

func (f *fakeCore) wasDropped(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Contains(f.dropped, id)
}

// TestPinnedToDevice: a WhatsApp bot's conversations are taken only by the
// replica holding the bot's device lease; the other refuses them (its
// work goes to the holder) and ignores them when polling. When the device
// moves, the conversation is handed over to its new holder at the next
// renewal. Other bots' conversations are not pinned, and while no replica
// holds the device any replica may take them.
func TestPinnedToDevice(t *testing.T) {
	st := openPG(t)
	ctx := context.Background()
	phone, _, err := st.GetOrCreateConversation(ctx, store.ConversationKey{Bot: "phone", Channel: "c", Thread: "t"}, "coder", "u")
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := st.GetOrCreateConversation(ctx, store.ConversationKey{Bot: "slack", Channel: "c", Thread: "t"}, "coder", "u")
	if err != nil {
		t.Fatal(err)
	}
	const lease = time.Second
	a, ca := startPinned(t, st, lease)
	b, cb := startPinned(t, st, lease)

	// Nobody holds the device: any replica may take it (then releases it).
	if ok, _, err := claim(ctx, a, phone.ID); !ok || err != nil {
		t.Fatalf("claim with no device holder = %v, %v; want taken", ok, err)
	}
	l, _ := a.leaseOf(phone.ID)
	a.releaseOne(ctx, phone.ID, l)

	dev, err := st.AcquireLease(ctx, "platform:whatsapp:phone", b.ID(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, err := claim(ctx, a, phone.ID); ok || err != nil {
		t.Fatalf("claim by the replica without the device = %v, %v; want refused", ok, err)
	}
	if ok, _, err := claim(ctx, a, other.ID); !ok || err != nil {
		t.Fatalf("claim of another bot's conversation = %v, %v; want taken", ok, err)
	}

	// Work for the pinned conversation: only the device holder takes it.
	if _, _, err := st.Enqueue(ctx, store.InboxMessage{ConversationID: phone.ID, Bot: "phone", PlatformMsgID: "m1", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, cb.pokes, phone.ID, 5*time.Second)
	time.Sleep(2 * lease / 3) // a few polls of a
	if slices.Contains(a.Held(), phone.ID) || slices.Contains(drain(ca.pokes), phone.ID) {
		t.Fatal("the replica without the device took the pinned conversation")
	}

	// The device moves to a: b hands the conversation over, a takes it.
	if err := st.ReleaseLease(ctx, dev); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AcquireLease(ctx, "platform:whatsapp:phone", a.ID(), time.Minute); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ca.pokes, phone.ID, 5*time.Second)
	if !cb.wasDropped(phone.ID) {
		t.Error("the old device holder did not stop the conversation")
	}
	// b lets go at its renewal; on a busy machine its lease may expire
	// first, a takes it, and b learns it lost it at that renewal.
	testkit.WaitUntilSeen(t, "the conversation held by a only", 5*time.Second, func() (bool, string) {
		ah, bh := a.Held(), b.Held()
		return !slices.Contains(bh, phone.ID) && slices.Contains(ah, phone.ID), fmt.Sprintf("a holds %v, b holds %v", ah, bh)
	})
}

// drain returns what ch holds now.
func drain(ch chan string) []string {
	var got []string
	for {
		select {
		case s := <-ch:
			got = append(got, s)
		default:
			return got
		}
	}
}
