package whatsapp

import (
	"slices"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"

	"github.com/agentbridge/agentbridge/bridges"
)

// pollOf returns the message id of the poll sent for card id (which the
// adapter remembers as that card's).
func (e *env) pollOf(chat types.JID, id string) string {
	e.t.Helper()
	var found string
	e.waitCalls("the poll of "+id, func(cs []fakeCall) bool {
		for _, c := range cs {
			if c.Op != "SendMessage" {
				continue
			}
			msgID := string(c.ID)
			if sm, ok := e.b.sent.Get(msgID); ok && sm.cardID == id && c.To == chat && c.Message.GetPollCreationMessage() != nil {
				found = msgID
				return true
			}
		}
		return false
	})
	return found
}

// TestQuotedNumberOnCardPoll: with approvals by poll, a number quoting a
// card's poll (not the card's text) decides that card: once card A is
// closed and card B open, "1" quoting A's poll is told A is closed and
// decides nothing — in particular not B — and "2" quoting B's poll denies
// B.
func TestQuotedNumberOnCardPoll(t *testing.T) {
	e := startWith(t, func(o *Options, _ *fakeClient, _ *sqlstore.Container) { o.Approvals = ApprovalsPoll })
	chat := pnJID(alice)
	quoting := func(id string) *waE2E.ContextInfo {
		return &waE2E.ContextInfo{StanzaID: proto.String(id), Participant: proto.String(botPhone + "@s.whatsapp.net")}
	}
	e.dispatch(e.msg(chat, pnJID(alice), "ask a"))
	pollA := e.pollOf(chat, "req-a")
	e.dispatch(extended(e.msg(chat, pnJID(alice), "1"), quoting(pollA)))
	e.waitText(chat, "allowed req-a")

	e.dispatch(e.msg(chat, pnJID(alice), "ask b"))
	pollB := e.pollOf(chat, "req-b")
	e.dispatch(extended(e.msg(chat, pnJID(alice), "1"), quoting(pollA)))
	e.waitText(chat, "already closed — allowed by @"+alice)
	e.dispatch(extended(e.msg(chat, pnJID(alice), "2"), quoting(pollB)))
	e.waitText(chat, "denied req-b")
	if d := decisions(e); !slices.Equal(d, []bool{true, false}) {
		t.Errorf("decisions %v, want card A allowed by its poll's quote and card B denied by its own", d)
	}
}

// TestCardPartsNameTheCard: a card too long for one message goes out in
// parts (and with approvals by poll, a poll); each part and the poll is
// remembered as that card's, naming the message Post returned, so a
// number quoting any of them — the first part, a later one, the poll —
// reaches the core as a reply to the card.
func TestCardPartsNameTheCard(t *testing.T) {
	e, key := startOwned(t)
	e.b.approvals = ApprovalsPoll
	m := bridges.Message{Text: strings.Repeat("a", maxTextRunes-100) + "\n\n" + strings.Repeat("b", 500) + "\n\n" + strings.Repeat("c", maxTextRunes-100),
		CardID: "card-1", Buttons: []bridges.Button{{ID: bridges.ChoiceAllow, Label: "Allow"}, {ID: bridges.ChoiceDeny, Label: "Deny"}},
		Idem: "3d6c1b0e-8a4f-4c1e-9b2d-7f0e5a6c1d22"}
	ref, err := e.b.Post(t.Context(), key, m)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := 0; i < 4; i++ {
		ids = append(ids, string(messageID(m.Idem, i)))
	}
	known := 0
	for _, id := range ids {
		sm, ok := e.b.sent.Get(id)
		if !ok {
			continue
		}
		known++
		if sm.cardID != "card-1" || sm.ref != ref.ID {
			t.Errorf("message %s remembered as %+v, want card-1 named by %s", id, sm, ref.ID)
		}
	}
	if known < 3 {
		t.Fatalf("%d messages of the card remembered (ids %v), want its parts and its poll", known, ids)
	}
}
