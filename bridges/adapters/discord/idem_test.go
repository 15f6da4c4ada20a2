package discord

import (
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
)

// newChannelFake is a fake with the guild text channel "100".
func newChannelFake(t *testing.T) *discordfake.Fake {
	f := discordfake.New(t)
	f.AddChannel("100", guild, "", discordfake.ChannelGuildText, "general")
	return f
}

// contentCount counts the bot's messages in ch whose content starts with
// prefix.
func contentCount(f *discordfake.Fake, ch, prefix string) int {
	n := 0
	for _, m := range f.Messages(ch) {
		if m.AuthorIsBot && strings.HasPrefix(m.Content, prefix) {
			n++
		}
	}
	return n
}

// A reply whose create-message reached Discord but whose answer was lost
// shows once: the connection closed (Post fails, transient; the core's
// retry with the same Idem gets the first message back), or 502s that
// discordgo retries by itself with the same nonce.
func TestPostRetryAfterLostResponseShowsOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		lose     int
		status   int
		firstErr bool // the first Post fails (else discordgo's own retry succeeds)
	}{
		{"connection closed", 1, 0, true},
		{"502 retried by discordgo", 1, 502, false},
		{"502 past discordgo's retries", 4, 502, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newChannelFake(t)
			b := newTestBridge(t, testBot(f))
			key := bridges.ConversationKey{Bot: botName, Channel: "100", Thread: "200"}
			f.AddChannel("200", guild, "100", discordfake.ChannelPublicThread, "t")
			m := bridges.Message{Text: "the answer", Idem: "6f1c1f9e-2f4b-4d7e-9d8a-2b1e1c0a9f11"}
			f.LoseResponses(tc.lose, tc.status)
			ref, err := b.Post(t.Context(), key, m)
			if tc.firstErr != (err != nil) || bridges.IsPermanent(err) {
				t.Fatalf("first Post: %v (want an error: %v, never permanent)", err, tc.firstErr)
			}
			if err != nil {
				m.Retry = true
				if ref, err = b.Post(t.Context(), key, m); err != nil {
					t.Fatal(err)
				}
			}
			if n := contentCount(f, "200", "the answer"); n != 1 {
				t.Fatalf("the reply shows %d times, want once", n)
			}
			if got, ok := f.Message(ref.ID); !ok || got.Content != "the answer" {
				t.Errorf("ref %+v is not the message: %+v", ref, got)
			}
		})
	}
}

// Each part of a split reply has its own nonce: a retry after the second
// part's answer was lost creates only what is missing, in order.
func TestPostRetrySplitReply(t *testing.T) {
	t.Parallel()
	f := newChannelFake(t)
	b := newTestBridge(t, testBot(f))
	key := bridges.ConversationKey{Bot: botName, Channel: "100"}
	text := strings.Repeat("a", 3900) + "\n\n" + strings.Repeat("b", 3900) + "\n\n" + strings.Repeat("c", 3900)
	m := bridges.Message{Text: text, Idem: "0b7d2c53-5f5e-4a51-8f43-9a0f8b0e6d21"}
	// The first post succeeds whole; a retry (as after a lost answer of
	// the last part) creates nothing new.
	if _, err := b.Post(t.Context(), key, m); err != nil {
		t.Fatal(err)
	}
	f.LoseResponses(1, 0)
	m.Retry = true
	ref, err := b.Post(t.Context(), key, m)
	if err == nil {
		t.Fatal("the retry's first answer should have been lost")
	}
	if ref, err = b.Post(t.Context(), key, m); err != nil {
		t.Fatal(err)
	}
	msgs := f.Messages("100")
	if len(msgs) != 3 {
		t.Fatalf("%d messages, want 3 (one per part)", len(msgs))
	}
	for i, want := range []string{"a", "b", "c"} {
		if !strings.HasPrefix(msgs[i].Text, want) {
			t.Errorf("message %d starts %.5q, want %q", i, msgs[i].Text, want)
		}
	}
	if ref.ID != msgs[2].ID {
		t.Errorf("ref %s, want the last part %s", ref.ID, msgs[2].ID)
	}
	if n1, n2 := nonceOf(m.Idem, 0), nonceOf(m.Idem, 1); len(n1) != 25 || n1 == n2 || nonceOf("other", 0) == n1 {
		t.Errorf("nonces %q %q", n1, n2)
	}
}

// Without Idem (a reply not from the outbox) no nonce is sent: two posts
// are two messages.
func TestPostWithoutIdemHasNoNonce(t *testing.T) {
	t.Parallel()
	f := newChannelFake(t)
	b := newTestBridge(t, testBot(f))
	key := bridges.ConversationKey{Bot: botName, Channel: "100"}
	for range 2 {
		if _, err := b.Post(t.Context(), key, bridges.Message{Text: "same"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := contentCount(f, "100", "same"); n != 2 {
		t.Errorf("%d messages, want 2", n)
	}
}

// A card (Components V2, buttons) posted with Idem is found by a later
// post of its closed text under the same Idem with Retry — the core
// closing a card whose reference its dead holder never stored: Discord
// answers with the card (nonce), nothing new shows, and the card is then
// edited to the closed text.
func TestPostRetryFindsCardByIdem(t *testing.T) {
	t.Parallel()
	f := newChannelFake(t)
	b := newTestBridge(t, testBot(f))
	key := bridges.ConversationKey{Bot: botName, Channel: "100", Thread: "200"}
	f.AddChannel("200", guild, "100", discordfake.ChannelPublicThread, "t")
	card, err := b.Post(t.Context(), key, bridges.Message{Text: "May the agent run make?", CardID: "req-1", Idem: "card:req-1",
		Buttons: []bridges.Button{{ID: bridges.ChoiceAllow, Label: "Allow"}, {ID: bridges.ChoiceDeny, Label: "Deny"}}})
	if err != nil {
		t.Fatal(err)
	}
	closed := bridges.Message{Text: "May the agent run make?\n\n⌛ Expired: bridge restarted.", CardID: "req-1"}
	again := closed
	again.Idem, again.Retry = "card:req-1", true
	found, err := b.Post(t.Context(), key, again)
	if err != nil {
		t.Fatal(err)
	}
	if found.ID != card.ID {
		t.Fatalf("the post under the card's Idem returned %s, want the card %s", found.ID, card.ID)
	}
	if n := len(f.Messages("200")); n != 1 {
		t.Fatalf("%d messages in the thread, want the card alone", n)
	}
	if err := b.Edit(t.Context(), found, closed); err != nil {
		t.Fatal(err)
	}
	if m, _ := f.Message(card.ID); len(m.Buttons()) != 0 {
		t.Errorf("the card still has buttons after the edit: %+v", m.Buttons())
	}
}
