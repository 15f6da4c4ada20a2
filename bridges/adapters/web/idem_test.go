package web

import (
	"context"
	"log/slog"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// TestPostWithIdemShowsOnce: a card posted with Idem, posted again with
// the same Idem and Retry (a holder closing a card whose reference it does
// not know), returns the card stored the first time and stores nothing
// new; the same Idem in another conversation is another message.
func TestPostWithIdemShowsOnce(t *testing.T) {
	st := testStore(t)
	c, err := New(Options{Config: testConfig(t, "127.0.0.1:0", usersYAML), Store: st, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Shutdown)
	ctx := context.Background()
	key := bridges.ConversationKey{Bot: "console", Channel: "ana", Thread: "idemthread1"}
	card, err := c.Post(ctx, key, bridges.Message{Text: "May the agent run make?", CardID: "req-1", Idem: "card:req-1",
		Buttons: []bridges.Button{{ID: bridges.ChoiceAllow, Label: "Allow"}}})
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Post(ctx, key, bridges.Message{Text: "⌛ Expired", CardID: "req-1", Idem: "card:req-1", Retry: true})
	if err != nil {
		t.Fatal(err)
	}
	if again != card {
		t.Errorf("the post again returned %+v, want the card %+v", again, card)
	}
	msgs, err := st.WebMessages(ctx, store.ConversationKey(key), 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].Text != "May the agent run make?" || len(msgs[0].Buttons) == 0 {
		t.Errorf("messages = %+v, want the card alone, as posted", msgs)
	}
	other := bridges.ConversationKey{Bot: "console", Channel: "ana", Thread: "idemthread2"}
	ref, err := c.Post(ctx, other, bridges.Message{Text: "⌛ Expired", CardID: "req-1", Idem: "card:req-1", Retry: true})
	if err != nil || ref.ID == card.ID {
		t.Errorf("the same Idem in another conversation: %+v, %v; want a new message", ref, err)
	}
}
