package whatsapp

import (
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
)

// Issue 24, finding 4 (acceptance): a 10-minute turn sends at most one
// progress message plus edits, and its answer as a new message that quotes
// the question. Before, it sent 20 "⏳ Still working…" messages.
func TestTenMinuteTurnOneProgressMessage(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	slow := func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		s.Emit(streamjson.ToolUse{ID: "tu-1", Name: "Bash", Input: []byte(`{"command":"make test"}`)})
		<-release
		s.Reply(m, "done")
	}
	e := startScript(t, nil, nil, slow)
	chat := pnJID(alice)
	e.dispatch(e.msg(chat, pnJID(alice), "run the tests"))
	e.waitCalls("composing", func(cs []fakeCall) bool {
		for _, c := range cs {
			if c.Op == "SendChatPresence" {
				return true
			}
		}
		return false
	})
	progress := func() (posts, edits int) {
		for _, c := range sends(e.fake.Calls()) {
			switch {
			case !strings.Contains(textOf(c), "Still working"):
			case editedID(c) != "":
				edits++
			default:
				posts++
			}
		}
		return posts, edits
	}
	for i := 1; i <= 20; i++ { // 10 minutes in steps of the progress interval
		e.core.Clock.Advance(30 * time.Second)
		e.waitCalls("a progress update", func([]fakeCall) bool { p, ed := progress(); return p+ed == i })
	}
	if posts, edits := progress(); posts != 1 || edits != 19 {
		t.Errorf("a 10-minute turn: %d progress messages and %d edits, want 1 and 19:\n%s", posts, edits, dumpCalls(e.fake.Calls()))
	}
	if shown := e.fake.Shown(chat); len(shown) != 1 || !strings.Contains(shown[0], "10m so far") {
		t.Errorf("the chat shows %q, want one progress line, up to date", shown)
	}
	release <- struct{}{}
	answer := e.waitText(chat, "done")
	if editedID(answer) != "" || answer.Message.GetExtendedTextMessage().GetContextInfo().GetStanzaID() == "" {
		t.Errorf("the answer must be a new message quoting the question: %s", dumpCalls([]fakeCall{answer}))
	}
}
