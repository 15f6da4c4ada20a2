package discord

import (
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
)

// liveThread is a fake with a thread "200" in channel "100", a bridge on
// it and the thread's conversation key.
func liveThread(t *testing.T) (*discordfake.Fake, *Bridge, bridges.ConversationKey) {
	f := newChannelFake(t)
	f.AddChannel("200", guild, "100", discordfake.ChannelPublicThread, "t")
	return f, newTestBridge(t, testBot(f)), bridges.ConversationKey{Bot: botName, Channel: "100", Thread: "200"}
}

// A live message created again under the same turn key (a new holder
// running the turn its dead holder had started) is the same message,
// taken over with the new text while it is open; once closed, the next
// create under that key is a new message.
func TestLivePostTakesOverOpenMessage(t *testing.T) {
	t.Parallel()
	f, b, key := liveThread(t)
	live := func(text string) bridges.MessageRef {
		t.Helper()
		ref, err := b.Post(t.Context(), key, bridges.Message{Text: text, Idem: "live:c1:m1", Live: true})
		if err != nil {
			t.Fatal(err)
		}
		return ref
	}
	first := live("the first holder's start …")
	again := live("the second holder's start …")
	if again.ID != first.ID {
		t.Fatalf("the turn's live message was created twice: %s, %s", first.ID, again.ID)
	}
	if m, _ := f.Message(first.ID); m.Text != "the second holder's start …" {
		t.Errorf("the message taken over shows %q", m.Text)
	}

	if err := b.CloseStream(t.Context(), again, "\n\n_(interrupted — continued below)_"); err != nil {
		t.Fatal(err)
	}
	m, _ := f.Message(first.ID)
	if m.Text != "the second holder's start\n\n_(interrupted — continued below)_" {
		t.Errorf("closed message shows %q", m.Text)
	}
	third := live("the third holder's start …")
	if third.ID == first.ID {
		t.Fatal("the closed message was taken over again")
	}
	if again := live("the fourth holder's start …"); again.ID != third.ID {
		t.Errorf("past a closed message, the next key's message was created twice: %s, %s", third.ID, again.ID)
	}
	if n := contentCount(f, "200", "the"); n != 2 {
		t.Errorf("%d messages, want 2 (the closed one and the live one)", n)
	}
}

// CloseStream leaves alone a message that is not growing (finished, or
// closed already) and one that is gone; a long live message (Components
// V2) is closed in its text display.
func TestCloseStreamOnlyOpen(t *testing.T) {
	t.Parallel()
	f, b, key := liveThread(t)
	note := "\n\n_(interrupted — continued below)_"
	done, err := b.Post(t.Context(), key, bridges.Message{Text: "a finished answer"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CloseStream(t.Context(), done, note); err != nil {
		t.Fatal(err)
	}
	if m, _ := f.Message(done.ID); m.Text != "a finished answer" || !m.EditedAt.IsZero() {
		t.Errorf("a finished message was changed: %q", m.Text)
	}
	if err := b.CloseStream(t.Context(), bridges.MessageRef{Key: key, ID: "123456"}, note); err != nil {
		t.Errorf("closing a message that is gone: %v", err)
	}
	long, err := b.Post(t.Context(), key, bridges.Message{Text: strings.Repeat("word ", 500) + "…"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CloseStream(t.Context(), long, note); err != nil {
		t.Fatal(err)
	}
	if m, _ := f.Message(long.ID); !m.V2 || !strings.HasSuffix(m.Text, "word\n\n_(interrupted — continued below)_") {
		t.Errorf("the long live message was not closed: V2 %v, ends %q", m.V2, m.Text[max(0, len(m.Text)-60):])
	}
}
