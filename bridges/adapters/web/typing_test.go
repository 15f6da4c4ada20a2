package web

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/feed"
)

// TestTurnStarting: a message accepted in a conversation where no turn
// runs makes it "starting" on the server (for new pages, the live agents
// page and the open ones, by a "typing" event) until a turn begins, the
// bridge answers or startingFor passes; a command or a message joining a
// running turn does not.
func TestTurnStarting(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	c, err := New(Options{Config: testConfig(t, "127.0.0.1:0", usersYAML), Store: testStore(t), Logger: slog.New(slog.DiscardHandler), Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Shutdown)
	ctx := context.Background()
	key := bridges.ConversationKey{Bot: "console", Channel: "ana", Thread: "threadst01"}
	sub := c.hub.Subscribe(feed.ThreadTopic(key.Thread))
	defer c.hub.Unsubscribe(sub)
	state := func(want string) {
		t.Helper()
		working, starting := c.turn(key)
		_, listed := c.Starting()[key]
		got := map[[3]bool]string{{false, false, false}: "idle", {true, false, false}: "working", {false, true, true}: "starting"}[[3]bool{working, starting, listed}]
		if got != want {
			t.Fatalf("state: working %v, starting %v, listed %v; want %s", working, starting, listed, want)
		}
	}
	event := func(wantOn, wantStarting bool) {
		t.Helper()
		select {
		case ev := <-sub.Events():
			if ev.Kind != feed.Typing || ev.On != wantOn || ev.Starting != wantStarting {
				t.Fatalf("event %+v, want typing on=%v starting=%v", ev, wantOn, wantStarting)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no typing event")
		}
	}

	if c.startTurn(ctx, key, bridges.CommandPrefix+"cost") {
		t.Error("a command starts the agent")
	}
	state("idle")
	if !c.startTurn(ctx, key, "hello") {
		t.Fatal("a message did not start the agent")
	}
	event(false, true)
	state("starting")
	if err := c.SetTyping(ctx, key, true); err != nil {
		t.Fatal(err)
	}
	event(true, false)
	state("working")
	if c.startTurn(ctx, key, "more") {
		t.Error("a message joining the running turn starts the agent")
	}
	state("working")
	if err := c.SetTyping(ctx, key, false); err != nil {
		t.Fatal(err)
	}
	event(false, false)
	state("idle")

	// The bridge answers otherwise: a post ends the start.
	c.startTurn(ctx, key, "again")
	event(false, true)
	if _, err := c.Post(ctx, key, bridges.Message{Text: "⏳ queued"}); err != nil {
		t.Fatal(err)
	}
	<-sub.Events() // the post
	event(false, false)
	state("idle")

	// A start nothing ends stops showing after startingFor.
	c.startTurn(ctx, key, "lost")
	event(false, true)
	mu.Lock()
	now = now.Add(startingFor)
	mu.Unlock()
	state("idle")
}
