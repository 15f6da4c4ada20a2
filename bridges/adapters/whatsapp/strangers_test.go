package whatsapp

import (
	"slices"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/store/sqlstore"
)

// A number outside access.users answers nothing on a card: its 👍
// reaction and its poll vote in the group where the card is open reach
// neither the core (no refusal said in the chat) nor WhatsApp (no read
// receipt, the vote is not decrypted); the approver's vote then decides.
func TestStrangerCardAnswersIgnored(t *testing.T) {
	e := startWith(t, func(o *Options, fake *fakeClient, dev *sqlstore.Container) {
		o.Approvals = ApprovalsPoll
		fake.decrypter = linkedClient(t, dev, botPhone)
	})
	mention := &waE2E.ContextInfo{MentionedJID: []string{botPhone + "@s.whatsapp.net"}}
	e.dispatch(extended(e.msg(group, pnJID(alice), "@"+botPhone+" ask a"), mention))
	var card, pollID string
	var poll *waE2E.Message
	e.waitCalls("the card and its poll", func(cs []fakeCall) bool {
		for _, c := range cs {
			if c.Op != "SendMessage" {
				continue
			}
			switch {
			case strings.Contains(textOf(c), "Vote in the poll below"):
				card = string(c.ID)
			case c.Message.GetPollCreationMessage() != nil:
				poll, pollID = c.Message, string(c.ID)
			}
		}
		return card != "" && poll != nil
	})
	before := len(e.fake.Calls())

	react := e.reaction(group, pnJID(stranger), card, "👍")
	e.dispatch(react)
	vote := newPollVoter(t, stranger).vote(t, e, group, pollID, poll, "Allow")
	e.dispatch(vote)
	e.dispatch(newPollVoter(t, alice).vote(t, e, group, pollID, poll, "Deny"))
	e.waitText(group, "denied req-a")

	for _, c := range e.fake.Calls()[before:] {
		switch {
		case c.Op == "DecryptPollVote":
			// alice's vote is decrypted; a second one would be the stranger's
		case c.Op == "MarkRead" && (slices.Contains(c.IDs, react.Info.ID) || slices.Contains(c.IDs, vote.Info.ID)):
			t.Errorf("read receipt for a stranger's answer: %s", dumpCalls([]fakeCall{c}))
		case c.Op == "SendMessage" && !strings.Contains(textOf(c), "denied req-a") && editedID(c) != card:
			t.Errorf("message caused by a stranger's answer: %s", dumpCalls([]fakeCall{c}))
		}
	}
	if n := len(slices.DeleteFunc(e.fake.Calls()[before:], func(c fakeCall) bool { return c.Op != "DecryptPollVote" })); n != 1 {
		t.Errorf("%d poll votes decrypted, want 1 (the approver's)", n)
	}
	if d := decisions(e); !slices.Equal(d, []bool{false}) {
		t.Errorf("decisions %v", d)
	}
}
