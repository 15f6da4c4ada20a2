package discord

import (
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/discord/discordfake"
)

func TestTypingIsRenewed(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	b := newTestBridge(t, testBot(f))
	b.typingEvery = 100 * time.Millisecond
	r := start(t, b)
	if err := f.WaitGateway(func(s discordfake.GatewayStats) bool { return s.Live == 1 }, wait); err != nil {
		t.Fatal(err)
	}
	f.SendMessage("dm1", "", "u1", "hi", false)
	key := bridges.ConversationKey{Bot: botName, Channel: "dm1"}

	if err := r.SetTyping(t.Context(), key, true); err != nil {
		t.Fatalf("SetTyping on: %v", err)
	}
	if n := len(f.Typing()); n < 1 {
		t.Fatalf("no typing indicator sent before SetTyping returned")
	}
	if err := f.Wait(wait, func() bool { return len(f.Typing()) >= 4 }); err != nil {
		t.Fatalf("typing not renewed: %d indicators", len(f.Typing()))
	}
	if err := r.SetTyping(t.Context(), key, false); err != nil {
		t.Fatalf("SetTyping off: %v", err)
	}
	time.Sleep(50 * time.Millisecond) // a renewal in flight may still land
	n := len(f.Typing())
	time.Sleep(400 * time.Millisecond)
	if m := len(f.Typing()); m != n {
		t.Errorf("typing went on after off: %d → %d", n, m)
	}
	for _, ty := range f.Typing() {
		if ty.ChannelID != "dm1" {
			t.Errorf("typing in %s", ty.ChannelID)
		}
	}
}
