package discord

import (
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
)

func TestTypingIsRenewed(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	b := newTestBridge(t, testBot(f))
	b.typingEvery = time.Millisecond
	r := runRecorded(t, b)
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
	// Off returns once the renewals have ended: a post later (several
	// renewal periods of 1 ms) finds no indicator after off.
	n := len(f.Typing())
	for range 5 {
		if _, err := r.Post(t.Context(), key, bridges.Message{Text: "done"}); err != nil {
			t.Fatal(err)
		}
	}
	if m := len(f.Typing()); m != n {
		t.Errorf("typing went on after off: %d → %d", n, m)
	}
	for _, ty := range f.Typing() {
		if ty.ChannelID != "dm1" {
			t.Errorf("typing in %s", ty.ChannelID)
		}
	}
}

// With the real core and status_delay: a follow-up in the bot's thread
// that the agent answers sooner costs exactly one REST call, the reply
// (no typing indicator).
func TestQuickTurnIsOneCall(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	b := newTestBridge(t, testBot(f))
	cfg := bridgetest.Config(t, testBot(f))
	cfg.StatusDelay = time.Second // the core's fake clock never gets there
	bridgetest.RunCore(t, cfg, map[string]bridges.Platform{botName: b}, nil)
	waitReady(t, b, f)
	answered := func(channel, text string) {
		t.Helper()
		if _, err := f.WaitForMessage(func(m discordfake.Message) bool {
			return m.ChannelID == channel && strings.Contains(m.Content, "pong: "+text)
		}, wait); err != nil {
			t.Fatalf("%q not answered: %v", text, err)
		}
	}
	thread := f.SendMessage("100", guild, "u1", "build it", true)
	answered(thread, "build it")
	n := len(f.Requests())
	// The second answer shows that the worker is past the first follow-up.
	for _, text := range []string{"more", "again"} {
		f.SendMessage(thread, guild, "u1", text, false)
		answered(thread, text)
	}
	var routes []string
	for _, r := range f.Requests()[n:] {
		routes = append(routes, r.Method+" "+r.Route)
	}
	if len(routes) != 2 || routes[0] != routes[1] || f.RequestCount(discordfake.RouteCreateMessage) < 3 {
		t.Errorf("REST calls for two quick follow-ups: %v, want one message post each", routes)
	}
	if ty := f.Typing(); len(ty) != 0 {
		t.Errorf("typing sent for quick turns: %+v", ty)
	}
}
