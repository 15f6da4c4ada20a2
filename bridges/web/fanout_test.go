package web

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
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
		for c.fan.Load() == nil {
			if time.Now().After(deadline) {
				t.Fatal("Fanout did not start")
			}
			time.Sleep(time.Millisecond)
		}
	}
	return a, b, st
}

// next returns the next event of s, failing after a few seconds.
func next(t *testing.T, s *subscriber) event {
	t.Helper()
	select {
	case ev := <-s.ch:
		return ev
	case <-s.gone:
		t.Fatal("the stream was dropped")
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5 s")
	}
	return event{}
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
	page := a.hub.subscribe(threadTopic(key.Thread), userTopic("ana"))
	defer a.hub.unsubscribe(page)
	own := b.hub.subscribe(threadTopic(key.Thread))
	defer b.hub.unsubscribe(own)

	ref, err := b.Post(ctx, key, bridges.Message{Text: "the answer", CardID: "card1", Buttons: []bridges.Button{{ID: "allow", Label: "Allow"}}})
	if err != nil {
		t.Fatal(err)
	}
	ev := next(t, page)
	if ev.kind != evMessage || ev.msg.ID != ref.ID || ev.msg.Text != "the answer" || ev.msg.CardID != "card1" || len(ev.msg.Buttons) == 0 {
		t.Fatalf("A's page got %+v, want the posted card", ev)
	}
	if ev := next(t, page); ev.kind != evList {
		t.Fatalf("A's page got %+v, want the list changed", ev)
	}
	if err := b.Edit(ctx, ref, bridges.Message{Text: "✅ Allowed by @ana"}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, page); ev.kind != evMessage || ev.msg.Text != "✅ Allowed by @ana" || len(ev.msg.Buttons) != 0 {
		t.Fatalf("A's page got %+v, want the closed card", ev)
	}
	if err := b.SetTyping(ctx, key, true); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, page); ev.kind != evTyping || !ev.on || !a.working(key) {
		t.Fatalf("A's page got %+v (working %v), want the turn running", ev, a.working(key))
	}
	if err := b.PostEphemeral(ctx, key, "ana", "only for ana"); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, page); ev.kind != evNotice || ev.user != "ana" || ev.text != "only for ana" {
		t.Fatalf("A's page got %+v, want ana's notice", ev)
	}
	if err := b.SetTyping(ctx, key, false); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, page); ev.kind != evTyping || ev.on || a.working(key) {
		t.Fatalf("A's page got %+v (working %v), want the turn ended", ev, a.working(key))
	}
	// B's own page saw each change once: nothing came back from A.
	for range 5 { // message, edit, typing, notice, typing (the list is a user topic)
		next(t, own)
	}
	select {
	case ev := <-own.ch:
		t.Errorf("B's page got a change twice: %+v", ev)
	case <-time.After(200 * time.Millisecond):
	}
}

// TestFanoutSignalFits: a long notice is cut to fit one signal; short
// ones travel whole.
func TestFanoutSignalFits(t *testing.T) {
	w := wireEvent{From: "r", Topic: threadTopic("t"), Kind: evNotice, User: "ana", Thread: "t"}
	for _, text := range []string{"short", strings.Repeat("<é>", 5000)} {
		p, err := fitSignal(w, text)
		if err != nil {
			t.Fatal(err)
		}
		if len(p) > maxSignal {
			t.Errorf("payload of %d bytes", len(p))
		}
		if text == "short" && !strings.Contains(p, `"x":"short"`) {
			t.Errorf("short notice changed: %s", p)
		}
		if text != "short" && !strings.Contains(p, "…") {
			t.Errorf("long notice not marked as cut")
		}
	}
}

// TestFanoutResyncDropsPages: when signals may have been missed, the
// pages open here are dropped, so that they reconnect and catch up from
// the store.
func TestFanoutResyncDropsPages(t *testing.T) {
	st := testStore(t)
	c, _, _ := newTestConsole(t, testConfig(t, "127.0.0.1:0", usersYAML), st)
	sig := &resyncSignals{ch: make(chan string)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- c.Fanout(ctx, sig, "r1") }()
	sig.ch <- `{"f":"r2","t":"u:ana","k":3}` // handled: Fanout has subscribed and dropped the older pages
	page := c.hub.subscribe(threadTopic("t"))
	sig.ch <- "" // Resync
	select {
	case <-page.gone:
	case <-time.After(5 * time.Second):
		t.Error("the page was not dropped on a resync")
	}
	cancel()
	close(sig.ch)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// resyncSignals hands Fanout the payloads the test sends on ch.
type resyncSignals struct{ ch chan string }

func (s *resyncSignals) Notify(context.Context, string, string) error { return nil }
func (s *resyncSignals) Listen(context.Context, string) (<-chan string, error) {
	return s.ch, nil
}

// working reports whether a turn runs in key's conversation.
func (c *Console) working(key bridges.ConversationKey) bool {
	w, _ := c.turn(key)
	return w
}
