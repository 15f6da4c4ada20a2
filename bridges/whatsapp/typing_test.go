package whatsapp

import (
	"slices"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config"
)

// "composing…" is cleared by a message in the chat, so off after a post
// costs no call; off without a post sends "paused". On also sends the
// read receipts of the chat's accepted messages, which waited for it.
func TestTypingOffAfterAPostIsFree(t *testing.T) {
	// The core's own indicator stays off (status_delay far away), so that
	// only this test's calls make presences, however slow the turn.
	e := startFull(t, nil, func(c *config.Config) { c.StatusDelay = time.Hour })
	in := e.msg(pnJID(alice), pnJID(alice), "hello")
	e.dispatch(in)
	e.waitText(pnJID(alice), "pong: *hello*")
	key := bridges.ConversationKey{Bot: "phone", Channel: pnJID(alice).String()}
	presences := func() []string {
		var out []string
		for _, c := range e.fake.Calls() {
			if c.Op == "SendChatPresence" {
				out = append(out, c.State)
			}
		}
		return out
	}
	before := len(presences())
	if err := e.b.SetTyping(t.Context(), key, true); err != nil {
		t.Fatal(err)
	}
	if _, err := e.b.Post(t.Context(), key, bridges.Message{Text: "answer"}); err != nil {
		t.Fatal(err)
	}
	if err := e.b.SetTyping(t.Context(), key, false); err != nil {
		t.Fatal(err)
	}
	if err := e.b.SetTyping(t.Context(), key, true); err != nil {
		t.Fatal(err)
	}
	if err := e.b.SetTyping(t.Context(), key, false); err != nil {
		t.Fatal(err)
	}
	want := []string{string(types.ChatPresenceComposing), string(types.ChatPresenceComposing), string(types.ChatPresencePaused)}
	if got := presences()[before:]; !slices.Equal(got, want) {
		t.Errorf("presences = %v, want %v", got, want)
	}
}
