package whatsapp

import (
	"slices"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"google.golang.org/protobuf/proto"
)

// Issue 24, finding 1 (the probe): card A answered, card B open, the
// adapter's memory of its messages lost (a restart, or more than sentCap
// messages since), then "1" quoting A. Before the fix it reached the core
// as a plain "1" and allowed B; now the core finds A in the store, says it
// is closed and decides nothing. A quoted 2 denies B (finding 2: 2 is Deny
// on every card, stated on the card).
func TestQuotedNumberOnForgottenCard(t *testing.T) {
	e := startWith(t, nil)
	chat := pnJID(alice)
	quoting := func(id string) *waE2E.ContextInfo {
		return &waE2E.ContextInfo{StanzaID: proto.String(id), Participant: proto.String(botPhone + "@s.whatsapp.net")}
	}
	e.dispatch(e.msg(chat, pnJID(alice), "ask a"))
	cardA := e.card(chat, "req-a")
	e.dispatch(extended(e.msg(chat, pnJID(alice), "1"), quoting(cardA)))
	e.waitText(chat, "allowed req-a")

	e.b.sent.Remove(cardA) // forgotten, as after a restart
	e.dispatch(e.msg(chat, pnJID(alice), "ask b"))
	cardB := e.card(chat, "req-b")
	e.dispatch(extended(e.msg(chat, pnJID(alice), "1"), quoting(cardA)))
	e.waitText(chat, "already closed — allowed by @"+alice)
	e.dispatch(extended(e.msg(chat, pnJID(alice), "2"), quoting(cardB)))
	e.waitText(chat, "denied req-b")
	if d := decisions(e); !slices.Equal(d, []bool{true, false}) {
		t.Errorf("decisions %v, want card A allowed and card B denied only", d)
	}
	for _, c := range sends(e.fake.Calls()) {
		if strings.Contains(textOf(c), "wants to run") && editedID(c) == "" && !strings.Contains(textOf(c), "Reply *1* Allow · *2* Deny") {
			t.Errorf("card without the fixed numbered choices: %q", textOf(c))
		}
	}
}
