package whatsapp

import (
	"slices"
	"testing"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"go.mau.fi/whatsmeow/types"
)

// Issue 24, finding 10: messages that arrive while a turn runs are marked
// read before the reply, in one receipt per chat and sender. Before, their
// receipts were dropped when the reply was posted.
func TestReceiptsBatchedBeforeReply(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	slow := func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		if m.Text != "slow" {
			return // a follow-up: the running turn answers
		}
		s.Emit(streamjson.ToolUse{ID: "tu-1", Name: "Bash", Input: []byte(`{"command":"make test"}`)})
		<-release
		s.Reply(m, "done")
	}
	e := startScript(t, nil, nil, slow)
	chat := pnJID(alice)
	first := e.msg(chat, pnJID(alice), "slow")
	e.dispatch(first)
	e.waitCalls("the first message read", func(cs []fakeCall) bool {
		return slices.ContainsFunc(cs, func(c fakeCall) bool { return c.Op == "MarkRead" && slices.Contains(c.IDs, first.Info.ID) })
	})
	second, third := e.msg(chat, pnJID(alice), "also this"), e.msg(chat, pnJID(alice), "and this")
	e.dispatch(second)
	e.dispatch(third)
	if _, err := e.core.Pool.Sessions()[0].WaitSent(t.Context(), 3); err != nil {
		t.Fatal(err)
	}
	release <- struct{}{}
	e.waitText(chat, "done")
	var receipts [][]types.MessageID
	for _, c := range e.fake.Calls() {
		switch {
		case c.Op == "MarkRead":
			receipts = append(receipts, c.IDs)
		case c.Op == "SendMessage" && textOf(c) != "" && len(receipts) < 2:
			t.Errorf("the reply was sent before the receipts of the queued messages: %s", dumpCalls(e.fake.Calls()))
		}
	}
	want := [][]types.MessageID{{first.Info.ID}, {second.Info.ID, third.Info.ID}}
	if !slices.EqualFunc(receipts, want, slices.Equal) {
		t.Errorf("receipts %v, want %v", receipts, want)
	}
}
