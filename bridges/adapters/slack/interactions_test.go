package slack

import (
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// A card is posted as Block Kit; a click is acked at once and reaches
// HandleAction with the card and choice; Reply answers privately; an Edit
// without buttons removes them.
func TestCardClickReplyAndResolve(t *testing.T) {
	e := startOnFake(t)
	e.fake.AddUser(slackfake.User{ID: "U7", Name: "bo", RealName: "Bo Real"})
	root := e.fake.Mention("C1", "U1", "deploy", "")
	e.waitAcked(t, root)
	key := threadKey(root)
	card := bridges.Message{
		Text:   "*Bash* wants to run:\n```\nrm -rf build/\n```",
		CardID: "perm-42",
		Buttons: []bridges.Button{
			{ID: "allow", Label: "Allow", Style: bridges.StylePrimary},
			{ID: "always", Label: "Always allow"},
			{ID: "deny", Label: "Deny", Style: bridges.StyleDanger},
		},
	}
	ref, err := e.b.Post(t.Context(), key, card)
	if err != nil {
		t.Fatal(err)
	}
	posted, ok := e.fake.Current("C1", ref.ID)
	if !ok {
		t.Fatal("card not posted")
	}
	want := []slackfake.Button{
		{BlockID: "card:perm-42", ActionID: "allow", Value: "perm-42|allow", Text: "Allow", Style: "primary"},
		{BlockID: "card:perm-42", ActionID: "always", Value: "perm-42|always", Text: "Always allow"},
		{BlockID: "card:perm-42", ActionID: "deny", Value: "perm-42|deny", Text: "Deny", Style: "danger"},
	}
	if len(posted.Buttons) != len(want) {
		t.Fatalf("buttons = %+v", posted.Buttons)
	}
	for i := range want {
		if posted.Buttons[i] != want[i] {
			t.Errorf("button %d = %+v, want %+v", i, posted.Buttons[i], want[i])
		}
	}
	if len(posted.Sections) != 1 || posted.ThreadTS != root {
		t.Errorf("card sections %q thread %q", posted.Sections, posted.ThreadTS)
	}

	env := e.fake.Click("C1", ref.ID, "U7", "deny", "")
	ack, err := e.fake.WaitForAck(env, waitLong)
	if err != nil {
		t.Fatal(err)
	}
	sentEnv, _ := e.fake.Envelope(env)
	t.Logf("click acked %v after it was sent (BenchmarkClickAck measures it)", ack.At.Sub(sentEnv.Sent))
	testkit.WaitUntil(t, "HandleAction", waitLong, func() bool { return len(e.h.actionList()) == 1 })
	a := e.h.actionList()[0]
	if a.CardID != "perm-42" || a.Choice != "deny" || a.UserID != "U7" || a.UserName != "Bo Real" || a.Key != key {
		t.Errorf("action = %+v", a)
	}
	if a.Reply == nil {
		t.Fatal("Reply is nil")
	}
	if err := a.Reply(t.Context(), "You may **not** approve this."); err != nil {
		t.Fatal(err)
	}
	eph, err := e.fake.WaitForEphemeral(nil, waitLong)
	if err != nil {
		t.Fatal(err)
	}
	if eph.Channel != "C1" || eph.User != "U7" || eph.ThreadTS != root || eph.Text != "You may *not* approve this." {
		t.Errorf("ephemeral = %+v", eph)
	}

	if err := e.b.Edit(t.Context(), ref, bridges.Message{Text: "Denied by Bo"}); err != nil {
		t.Fatal(err)
	}
	cur, _ := e.fake.Current("C1", ref.ID)
	if len(cur.Buttons) != 0 || cur.Blocks != nil || cur.Text != "Denied by Bo" {
		t.Errorf("after edit: text %q buttons %d blocks %s", cur.Text, len(cur.Buttons), cur.Blocks)
	}
}

// Clicks on buttons that are not the adapter's cards are acked and ignored.
func TestForeignButtonIgnored(t *testing.T) {
	e := startOnFake(t)
	env := e.fake.Click("C1", "999.000001", "U7", "something", "v")
	if _, err := e.fake.WaitForAck(env, waitLong); err != nil {
		t.Fatal(err)
	}
	e.settle(t) // the click is acked before it is handled
	if n := len(e.h.actionList()); n != 0 {
		t.Errorf("%d actions for a foreign button, want 0", n)
	}
}
