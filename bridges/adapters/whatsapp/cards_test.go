package whatsapp

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
)

// linkedClient is a real whatsmeow client of a device linked to +user,
// in its own device store (nothing connects).
func linkedClient(t *testing.T, c *sqlstore.Container, user string) *whatsmeow.Client {
	t.Helper()
	if c == nil {
		var err error
		if c, err = OpenDeviceStore(t.Context(), filepath.Join(t.TempDir(), "device.db"), nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
	}
	dev := c.NewDevice()
	saveLinked(t, c, dev, user)
	return whatsmeow.NewClient(dev, nil)
}

// pollVoter votes in the bot's polls like a phone would: it has received
// the poll (stored its secret) and encrypts its vote with its own keys.
type pollVoter struct {
	cli  *whatsmeow.Client
	user types.JID
}

func newPollVoter(t *testing.T, phone string) pollVoter {
	return pollVoter{cli: linkedClient(t, nil, strings.TrimPrefix(phone, "+")), user: pnJID(phone)}
}

// vote builds the voter's encrypted vote for option in the bot's poll
// (poll = the poll message as the fake sent it, with its id).
func (v pollVoter) vote(t *testing.T, e *env, chat types.JID, pollID string, poll *waE2E.Message, option string) *events.Message {
	t.Helper()
	ctx := context.Background()
	bot := pnJID("+" + botPhone)
	secret := poll.GetMessageContextInfo().GetMessageSecret()
	if err := v.cli.Store.MsgSecrets.PutMessageSecret(ctx, chat, bot, pollID, secret); err != nil {
		t.Fatal(err)
	}
	info := &types.MessageInfo{MessageSource: types.MessageSource{Chat: chat, Sender: bot, IsGroup: chat.Server == types.GroupServer}, ID: pollID}
	vote, err := v.cli.BuildPollVote(ctx, info, []string{option})
	if err != nil {
		t.Fatal(err)
	}
	m := e.msg(chat, v.user, "")
	m.Message = vote
	return m
}

// With approvals: poll a card comes with a poll of its choices; a vote
// (decrypted with the real client and the secret of the sent poll) is a
// click: a stranger's vote is not even decrypted, a colleague who may not
// approve decides nothing (the core refuses the click), the approver's
// vote decides.
func TestApprovalByPoll(t *testing.T) {
	e := startWith(t, func(o *Options, fake *fakeClient, dev *sqlstore.Container) {
		o.Approvals = ApprovalsPoll
		fake.decrypter = linkedClient(t, dev, botPhone)
	})
	mention := &waE2E.ContextInfo{MentionedJID: []string{botPhone + "@s.whatsapp.net"}}
	e.dispatch(extended(e.msg(group, pnJID(bob), "@"+botPhone+" ask a"), mention))
	card := e.waitText(group, "Vote in the poll below")
	if !strings.Contains(textOf(card), "*1* Allow · *2* Deny") {
		t.Errorf("card %q does not number its choices", textOf(card))
	}
	var poll fakeCall
	pollID := ""
	e.waitCalls("the poll", func(cs []fakeCall) bool {
		for _, c := range cs {
			if c.Op != "SendMessage" {
				continue
			}
			if c.Message.GetPollCreationMessage() != nil {
				poll, pollID = c, string(c.ID)
				return true
			}
		}
		return false
	})
	pc := poll.Message.GetPollCreationMessage()
	var options []string
	for _, o := range pc.GetOptions() {
		options = append(options, o.GetOptionName())
	}
	if !slices.Equal(options, []string{"Allow", "Deny"}) || pc.GetSelectableOptionsCount() != 1 || poll.To != group ||
		!strings.Contains(pc.GetName(), "Bash wants to run") {
		t.Errorf("poll %q options %q (%d selectable) to %s", pc.GetName(), options, pc.GetSelectableOptionsCount(), poll.To)
	}

	e.dispatch(newPollVoter(t, stranger).vote(t, e, group, pollID, poll.Message, "Allow"))
	if slices.ContainsFunc(e.fake.Calls(), op("DecryptPollVote")) {
		t.Error("a stranger's vote was decrypted")
	}
	e.dispatch(newPollVoter(t, alice).vote(t, e, group, pollID, poll.Message, "Deny")) // alice: an approver
	e.waitText(group, "denied req-a")
	if d := decisions(e); !slices.Equal(d, []bool{false}) {
		t.Errorf("decisions %v", d)
	}

	e.dispatch(extended(e.msg(group, pnJID(alice), "@"+botPhone+" ask b"), mention))
	e.waitText(group, "Vote in the poll below")
	e.waitCalls("the second poll", func(cs []fakeCall) bool {
		n := 0
		for _, c := range cs {
			if c.Op == "SendMessage" && c.Message.GetPollCreationMessage() != nil {
				n++
			}
		}
		return n == 2
	})
	secondID, second := "", (*waE2E.Message)(nil)
	for _, c := range e.fake.Calls() {
		if c.Op == "SendMessage" {
			if c.Message.GetPollCreationMessage() != nil {
				secondID, second = string(c.ID), c.Message
			}
		}
	}
	e.dispatch(newPollVoter(t, bob).vote(t, e, group, secondID, second, "Deny")) // bob may not decide alice's request
	e.dispatch(newPollVoter(t, alice).vote(t, e, group, secondID, second, "Allow"))
	e.waitText(group, "allowed req-b") // (the worker takes votes in order: bob's decided nothing)
	if d := decisions(e); !slices.Equal(d, []bool{false, true}) {
		t.Errorf("decisions %v", d)
	}
}
