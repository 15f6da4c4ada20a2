package feed

import (
	"bytes"
	"context"
	"testing"
)

// TestHubTopics: an event reaches the streams of its topic only; a stream
// that falls subscriberBuffer events behind is dropped rather than waited
// for; Close drops every stream, now and later.
func TestHubTopics(t *testing.T) {
	h := New(nil)
	ctx := context.Background()
	ana, bob := h.Subscribe(ThreadTopic("t1"), UserTopic("ana")), h.Subscribe(UserTopic("bob"))
	defer h.Unsubscribe(bob)
	h.Publish(ctx, UserTopic("ana"), Event{Kind: List})
	if ev := <-ana.Events(); ev.Kind != List {
		t.Fatalf("ana's stream got %+v, want the list changed", ev)
	}
	if len(bob.Events()) != 0 {
		t.Fatal("bob's stream got ana's event")
	}
	for range subscriberBuffer + 1 {
		h.Publish(ctx, ThreadTopic("t1"), Event{Kind: Typing, Thread: "t1"})
	}
	select {
	case <-ana.Gone():
	default:
		t.Fatal("a stream that fell behind was not dropped")
	}
	if h.has(ThreadTopic("t1")) {
		t.Error("the dropped stream is still on its topic")
	}
	h.Close()
	select {
	case <-bob.Gone():
	default:
		t.Error("Close left a stream open")
	}
	select {
	case <-h.Subscribe(UserTopic("bob")).Gone():
	default:
		t.Error("a stream opened after Close is not gone")
	}
}

// TestWriteEvent: one server-sent event, its data JSON on one line.
func TestWriteEvent(t *testing.T) {
	var buf bytes.Buffer
	WriteEvent(&buf, "msg", "7", map[string]string{"text": "two\nlines"})
	WriteEvent(&buf, "list", "", struct{}{})
	want := "id: 7\nevent: msg\ndata: {\"text\":\"two\\nlines\"}\n\nevent: list\ndata: {}\n\n"
	if buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}
