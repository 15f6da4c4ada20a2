package discordfake

import (
	"strings"
	"testing"
	"time"
)

// HoldResponse holds the answer of the matching request only: the
// message is created and shows at once, the answer comes on release.
func TestHoldResponse(t *testing.T) {
	t.Parallel()
	f := New(t)
	f.AddChannel("10", "1", "", ChannelGuildText, "general")
	reached, release := f.HoldResponse(RouteCreateMessage, func(body string) bool { return strings.Contains(body, "held") })
	if st, _ := createRaw(t, f, "10", map[string]any{"content": "not this one"}); st != 200 {
		t.Fatalf("an unmatched create: %d", st)
	}
	answered := make(chan string, 1)
	go func() {
		_, id := createRaw(t, f, "10", map[string]any{"content": "held answer"})
		answered <- id
	}()
	select {
	case <-reached:
	case <-time.After(5 * time.Second):
		t.Fatal("the held request never arrived")
	}
	if _, err := f.WaitForMessage(func(m Message) bool { return m.Content == "held answer" }, 5*time.Second); err != nil {
		t.Fatalf("the held create made no message: %v", err)
	}
	select {
	case id := <-answered:
		t.Fatalf("answered before the release: %s", id)
	case <-time.After(100 * time.Millisecond):
	}
	release()
	select {
	case id := <-answered:
		if m, ok := f.Message(id); !ok || m.Content != "held answer" {
			t.Errorf("the released answer names %s", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no answer after the release")
	}
}
