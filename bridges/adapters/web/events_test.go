package web

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/feed"
	"github.com/agentbridge/agentbridge/store"
)

// fanoutPair is two consoles on one store, as two replicas' consoles on
// one database: on SQLite the store's signals stay in the process, which
// is what two Fanouts on one store need.
func fanoutPair(t *testing.T) (a, b *Console, st *store.Store) {
	t.Helper()
	st = testStore(t)
	a, _, _ = newTestConsole(t, testConfig(t, "127.0.0.1:0", usersYAML), st)
	b, _, _ = newTestConsole(t, testConfig(t, "127.0.0.1:0", usersYAML), st)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	for _, x := range []struct {
		c  *Console
		id string
	}{{a, "replica-a"}, {b, "replica-b"}} {
		wg.Go(func() {
			if err := x.c.Fanout(ctx, st, x.id); err != nil {
				t.Errorf("Fanout %s: %v", x.id, err)
			}
		})
	}
	for _, c := range []*Console{a, b} {
		deadline := time.Now().Add(5 * time.Second)
		for !c.hub.Relaying() {
			if time.Now().After(deadline) {
				t.Fatal("Fanout did not start")
			}
			time.Sleep(time.Millisecond)
		}
	}
	return a, b, st
}

// next returns the next event of s, failing after a few seconds.
func next(t *testing.T, s *feed.Subscriber) feed.Event {
	t.Helper()
	select {
	case ev := <-s.Events():
		return ev
	case <-s.Gone():
		t.Fatal("the stream was dropped")
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5 s")
	}
	return feed.Event{}
}

// TestFanoutRelaysToTheOtherReplica: what one console shows — a message
// posted and edited, the turn running, a private notice, a changed list —
// reaches the pages open on the other console, and the other console
// knows the turn runs (for pages that connect later); its own changes are
// not relayed back to it.
func TestFanoutRelaysToTheOtherReplica(t *testing.T) {
	a, b, _ := fanoutPair(t)
	ctx := context.Background()
	key := bridges.ConversationKey{Bot: "console", Channel: "ana", Thread: "t1"}
	page := a.hub.Subscribe(feed.ThreadTopic(key.Thread), feed.UserTopic("ana"))
	defer a.hub.Unsubscribe(page)
	own := b.hub.Subscribe(feed.ThreadTopic(key.Thread))
	defer b.hub.Unsubscribe(own)

	ref, err := b.Post(ctx, key, bridges.Message{Text: "the answer", CardID: "card1", Buttons: []bridges.Button{{ID: "allow", Label: "Allow"}}})
	if err != nil {
		t.Fatal(err)
	}
	ev := next(t, page)
	if ev.Kind != feed.Message || ev.Msg.ID != ref.ID || ev.Msg.Text != "the answer" || ev.Msg.CardID != "card1" || len(ev.Msg.Buttons) == 0 {
		t.Fatalf("A's page got %+v, want the posted card", ev)
	}
	if ev := next(t, page); ev.Kind != feed.List {
		t.Fatalf("A's page got %+v, want the list changed", ev)
	}
	if err := b.Edit(ctx, ref, bridges.Message{Text: "✅ Allowed by @ana"}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, page); ev.Kind != feed.Message || ev.Msg.Text != "✅ Allowed by @ana" || len(ev.Msg.Buttons) != 0 {
		t.Fatalf("A's page got %+v, want the closed card", ev)
	}
	if err := b.SetTyping(ctx, key, true); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, page); ev.Kind != feed.Typing || !ev.On || !a.working(key) {
		t.Fatalf("A's page got %+v (working %v), want the turn running", ev, a.working(key))
	}
	if err := b.PostEphemeral(ctx, key, "ana", "only for ana"); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, page); ev.Kind != feed.Notice || ev.User != "ana" || ev.Text != "only for ana" {
		t.Fatalf("A's page got %+v, want ana's notice", ev)
	}
	if err := b.SetTyping(ctx, key, false); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, page); ev.Kind != feed.Typing || ev.On || a.working(key) {
		t.Fatalf("A's page got %+v (working %v), want the turn ended", ev, a.working(key))
	}
	// B's own page saw each change once: nothing came back from A.
	for range 5 { // message, edit, typing, notice, typing (the list is a user topic)
		next(t, own)
	}
	select {
	case ev := <-own.Events():
		t.Errorf("B's page got a change twice: %+v", ev)
	case <-time.After(200 * time.Millisecond):
	}
}

// working reports whether a turn runs in key's conversation.
func (c *Console) working(key bridges.ConversationKey) bool {
	w, _ := c.turn(key)
	return w
}
