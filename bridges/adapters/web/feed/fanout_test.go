package feed

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// TestFanoutSignalFits: a long notice is cut to fit one signal; short
// ones travel whole.
func TestFanoutSignalFits(t *testing.T) {
	w := wireEvent{From: "r", Topic: ThreadTopic("t"), Kind: Notice, User: "ana", Thread: "t"}
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

// testSignals hands Fanout the payloads the test sends on ch and records
// what it notifies.
type testSignals struct {
	ch       chan string
	notified chan string
}

func newTestSignals() *testSignals {
	return &testSignals{ch: make(chan string), notified: make(chan string, 16)}
}

func (s *testSignals) Notify(_ context.Context, channel, payload string) error {
	if channel != FanoutChannel {
		return errors.New("wrong channel " + channel)
	}
	s.notified <- payload
	return nil
}

func (s *testSignals) Listen(context.Context, string) (<-chan string, error) { return s.ch, nil }

// runFanout runs h.Fanout with sig as replica r1 until the test ends.
func runFanout(t *testing.T, h *Hub, sig *testSignals, relay Relay) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- h.Fanout(ctx, sig, "r1", relay) }()
	t.Cleanup(func() {
		cancel()
		close(sig.ch)
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	sig.ch <- `{"f":"r2","t":"u:nobody","k":3}` // handled: Fanout listens and dropped the older pages
}

// noRelay is a Relay for tests that relay no message or turn.
var noRelay = Relay{
	Message: func(context.Context, string) (store.WebMessage, error) {
		return store.WebMessage{}, errors.New("no store")
	},
	Turn: func(bridges.ConversationKey, bool, bool) {},
}

// TestFanoutResyncDropsPages: when signals may have been missed, the
// pages open here are dropped, so that they reconnect and catch up from
// the store.
func TestFanoutResyncDropsPages(t *testing.T) {
	h := New(nil)
	sig := newTestSignals()
	runFanout(t, h, sig, noRelay)
	page := h.Subscribe(ThreadTopic("t"))
	sig.ch <- "" // Resync
	select {
	case <-page.Gone():
	case <-time.After(5 * time.Second):
		t.Error("the page was not dropped on a resync")
	}
}

// TestFanoutRelay: another replica's message is read through the relay
// (only when a page of its conversation is open here), its turn noted, its
// notice delivered; this replica's own signals are not relayed back, and
// what is published here is signalled to the others.
func TestFanoutRelay(t *testing.T) {
	h := New(nil)
	sig := newTestSignals()
	var turns []bridges.ConversationKey
	read := 0
	runFanout(t, h, sig, Relay{
		Message: func(_ context.Context, id string) (store.WebMessage, error) {
			read++
			return store.WebMessage{ID: id, Text: "as stored"}, nil
		},
		Turn: func(key bridges.ConversationKey, on, starting bool) {
			if on {
				turns = append(turns, key)
			}
		},
	})
	sig.ch <- `{"f":"r2","t":"t:closed","k":0,"th":"closed","m":"m0"}` // no page open on it: not read
	page := h.Subscribe(ThreadTopic("t1"), UserTopic("ana"))
	defer h.Unsubscribe(page)
	sig.ch <- `{"f":"r1","t":"t:t1","k":1,"th":"t1","on":true}` // its own: not relayed
	sig.ch <- `{"f":"r2","t":"t:t1","k":0,"th":"t1","m":"m1"}`
	sig.ch <- `{"f":"r2","t":"t:t1","k":1,"b":"console","c":"ana","th":"t1","on":true}`
	sig.ch <- `{"f":"r2","t":"u:ana","k":2,"u":"ana","x":"only for ana"}`
	want := []Event{
		{Kind: Message, Thread: "t1", Msg: store.WebMessage{ID: "m1", Text: "as stored"}},
		{Kind: Typing, Thread: "t1", On: true},
		{Kind: Notice, User: "ana", Text: "only for ana"},
	}
	for i, w := range want {
		select {
		case ev := <-page.Events():
			if ev.Kind != w.Kind || ev.Thread != w.Thread || ev.Msg.ID != w.Msg.ID || ev.Msg.Text != w.Msg.Text || ev.On != w.On || ev.User != w.User || ev.Text != w.Text {
				t.Errorf("event %d: got %+v, want %+v", i, ev, w)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("event %d: none within 5 s", i)
		}
	}
	if read != 1 || len(turns) != 1 || turns[0] != (bridges.ConversationKey{Bot: "console", Channel: "ana", Thread: "t1"}) {
		t.Errorf("read %d messages (want 1, the one with a page open), noted turns %v (want console/ana/t1 only)", read, turns)
	}

	h.Publish(context.Background(), ThreadTopic("t1"), Event{Kind: Message, Thread: "t1", Msg: store.WebMessage{ID: "m2", Text: "not in the signal"}})
	select {
	case p := <-sig.notified:
		if !strings.Contains(p, `"f":"r1"`) || !strings.Contains(p, `"m":"m2"`) || strings.Contains(p, "not in the signal") {
			t.Errorf("signal %s: want from r1, naming message m2, without its text", p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a change published here was not signalled")
	}
}
