package whatsapp

import (
	"errors"
	"slices"
	"testing"

	"go.mau.fi/whatsmeow/types"

	"github.com/agentbridge/agentbridge/bridges"
)

// Nothing is ever sent to a chat that did not write first: Post and
// SetTyping into a chat the core has no conversation in are refused with
// ErrNotAllowed and nothing reaches the client (a stranger who wrote
// counts as not having written); once the chat wrote and was accepted,
// the same calls go through. Before Run nothing is sent.
func TestWritesOnlyToChatsThatWroteFirst(t *testing.T) {
	idle := New(Options{Bot: "phone", Client: newFakeClient(nil)})
	if _, err := idle.Post(t.Context(), bridges.ConversationKey{Bot: "phone", Channel: pnJID(alice).String()}, bridges.Message{Text: "hi"}); !errors.Is(err, ErrNotAllowed) {
		t.Errorf("Post before Run = %v, want ErrNotAllowed", err)
	}

	e := startWith(t, nil)
	sendsTo := func(chat types.JID) int {
		n := 0
		for _, c := range e.fake.Calls() {
			if (c.Op == "SendMessage" || c.Op == "SendChatPresence") && c.To == chat {
				n++
			}
		}
		return n
	}
	e.dispatch(e.msg(pnJID(stranger), pnJID(stranger), "hi")) // a stranger writing is no conversation
	for _, chat := range []types.JID{pnJID(bob), group, pnJID(stranger)} {
		k := bridges.ConversationKey{Bot: "phone", Channel: chat.String()}
		if _, err := e.b.Post(t.Context(), k, bridges.Message{Text: "hello?"}); !errors.Is(err, ErrNotAllowed) {
			t.Errorf("Post to %s = %v, want ErrNotAllowed", chat, err)
		}
		if err := e.b.SetTyping(t.Context(), k, true); !errors.Is(err, ErrNotAllowed) {
			t.Errorf("SetTyping in %s = %v, want ErrNotAllowed", chat, err)
		}
		if n := sendsTo(chat); n != 0 {
			t.Errorf("%d calls reached %s:\n%s", n, chat, dumpCalls(e.fake.Calls()))
		}
	}

	e.dispatch(e.msg(pnJID(bob), pnJID(bob), "hi"))
	e.waitText(pnJID(bob), "pong: *hi*")
	if _, err := e.b.Post(t.Context(), bridges.ConversationKey{Bot: "phone", Channel: pnJID(bob).String()}, bridges.Message{Text: "later"}); err != nil {
		t.Errorf("Post to a chat that wrote: %v", err)
	}
	if !slices.ContainsFunc(e.fake.Calls(), func(c fakeCall) bool { return c.To == pnJID(bob) && textOf(c) == "later" }) {
		t.Error("the post to a chat that wrote was not sent")
	}
}
