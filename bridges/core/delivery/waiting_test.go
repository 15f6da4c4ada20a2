package delivery_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
)

// TestWaitingBack: Back wakes every waiting conversation of its bot once,
// not those of another bot nor one removed.
func TestWaitingBack(t *testing.T) {
	var w delivery.Waiting
	var woke []string
	for _, c := range []string{"a", "b", "c"} {
		w.Add("team", c, func() { woke = append(woke, c) })
	}
	w.Add("other", "d", func() { woke = append(woke, "d") })
	w.Remove("team", "c")
	if n := w.Back("team"); n != 2 {
		t.Errorf("Back woke %d, want 2", n)
	}
	slices.Sort(woke)
	if !slices.Equal(woke, []string{"a", "b"}) {
		t.Errorf("woke %v, want [a b]", woke)
	}
	if n := w.Back("team"); n != 0 {
		t.Errorf("a second Back woke %d, want none (each wake-up once)", n)
	}
}

// TestOutboxWake: a wake-up posts the waiting replies at once, in order,
// once each; within the first back-off of the last failure it only moves
// the retry to that back-off's end; without a retry scheduled it does
// nothing.
func TestOutboxWake(t *testing.T) {
	ctx := context.Background()
	o, h, _ := newOutbox(t, "first", "second")
	key := bridges.ConversationKey{Bot: "team", Channel: "C", Thread: "T"}
	outage := true
	h.plat.FailPosts(func(bridges.ConversationKey, bridges.Message) error {
		if outage {
			return errors.New("HTTP 503 Service Unavailable")
		}
		return nil
	})
	o.Flush(ctx)
	h.now = h.now.Add(2 * time.Second)
	o.Retry(ctx) // the back-off is 4 s now
	outage = false
	h.now = h.now.Add(500 * time.Millisecond)
	o.Wake(ctx)
	if got := texts(h.plat.Messages(key)); len(got) != 0 {
		t.Fatalf("posted %q within the first back-off of a failure", got)
	}
	if last := h.retries[len(h.retries)-1]; last != 1500*time.Millisecond {
		t.Errorf("the retry moved to %s from now, want 1.5s (the end of the first back-off)", last)
	}
	h.now = h.now.Add(1500 * time.Millisecond)
	o.Wake(ctx)
	if got := texts(h.plat.Messages(key)); len(got) != 2 || got[1] != "second" {
		t.Fatalf("after the wake-up: %q, want first and second", got)
	}
	if o.Retrying() {
		t.Error("a retry is still scheduled")
	}
	if h.backs == 0 {
		t.Error("the successful posts were not told as a sign that the platform is back")
	}
	o.Wake(ctx)
	o.Retry(ctx) // the old timer fires
	if got := texts(h.plat.Messages(key)); len(got) != 2 {
		t.Errorf("posted again: %q", got)
	}
}
