package discord

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/discord/discordfake"
)

func TestCardClick(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	r := startReady(t, f)
	r.rec.mu.Lock()
	r.rec.actionDelay = 3200 * time.Millisecond // a core slower than Discord's 3 s budget
	r.rec.mu.Unlock()

	id := f.SendMessage("100", guild, "u1", "deploy it", true)
	key := r.rec.waitMsg(t, id).Key
	card := bridges.Message{
		Text:   "**Bash** wants to run `make deploy`",
		CardID: "perm-7",
		Buttons: []bridges.Button{
			{ID: "allow", Label: "Allow", Style: bridges.StylePrimary},
			{ID: "always", Label: "Always allow"},
			{ID: "deny", Label: "Deny", Style: bridges.StyleDanger},
		},
	}
	ref, err := r.Post(t.Context(), key, card)
	if err != nil {
		t.Fatalf("Post card: %v", err)
	}
	posted, _ := f.Message(ref.ID)
	if posted.ChannelID != key.Thread {
		t.Errorf("card posted in %s, want the thread %s", posted.ChannelID, key.Thread)
	}
	want := []discordfake.Button{
		{CustomID: "c:perm-7:allow", Label: "Allow", Style: 1},
		{CustomID: "c:perm-7:always", Label: "Always allow", Style: 2},
		{CustomID: "c:perm-7:deny", Label: "Deny", Style: 4},
	}
	if got := posted.Buttons(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("buttons = %+v, want %+v", got, want)
	}

	clicked := time.Now()
	iid := f.Click(key.Thread, ref.ID, "u2", "c:perm-7:deny")
	act := r.rec.waitAction(t)

	resps := f.InteractionResponses()
	if len(resps) != 1 {
		t.Fatalf("interaction responses = %+v, want 1", resps)
	}
	ack := resps[0]
	if ack.InteractionID != iid || ack.Type != discordfake.CallbackDeferredUpdate || ack.Late {
		t.Errorf("ack = %+v, want a timely type 6 for %s", ack, iid)
	}
	r.rec.mu.Lock()
	calledAt := r.rec.actAt[0]
	r.rec.mu.Unlock()
	if ack.At.After(calledAt) {
		t.Errorf("acknowledged at %v, after HandleAction was called at %v", ack.At, calledAt)
	}
	if act.CardID != "perm-7" || act.Choice != "deny" || act.UserID != "u2" || act.Key != key {
		t.Errorf("action = %+v", act)
	}
	t.Logf("click → ack %v, click → action %v", ack.Latency(), time.Since(clicked))

	if err := act.Reply(t.Context(), "Only the requester or an approver may decide."); err != nil {
		t.Fatalf("Reply: %v", err)
	}
	fu := f.Followups()
	if len(fu) != 1 || !fu[0].Ephemeral() || fu[0].InteractionID != iid || fu[0].Content != "Only the requester or an approver may decide." {
		t.Errorf("followups = %+v, want one ephemeral", fu)
	}
	for _, m := range f.Messages(key.Thread) {
		if strings.Contains(m.Content, "Only the requester") {
			t.Errorf("ephemeral reply visible in the thread: %+v", m)
		}
	}

	if err := r.Edit(t.Context(), ref, bridges.Message{Text: "**Bash** `make deploy` — denied by u2"}); err != nil {
		t.Fatalf("Edit: %v", err)
	}
	edited, _ := f.Message(ref.ID)
	if len(edited.Rows) != 0 || edited.Content != "**Bash** `make deploy` — denied by u2" {
		t.Errorf("edited card = %+v, want text and no buttons", edited)
	}
	edits := f.Edits()
	if last := edits[len(edits)-1]; !last.ComponentsSet || len(last.Rows) != 0 {
		t.Errorf("edit = %+v, want components: []", last)
	}
}

func TestCustomIDRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct{ card, choice string }{
		{"perm-1", "allow"},
		{"ask:42", "opt3"}, // a card id may contain ':'
		{"550e8400-e29b-41d4-a716-446655440000", "always"},
	}
	for _, tc := range tests {
		id, err := customID(tc.card, tc.choice)
		if err != nil {
			t.Fatalf("customID(%q, %q): %v", tc.card, tc.choice, err)
		}
		card, choice, ok := parseCustomID(id)
		if !ok || card != tc.card || choice != tc.choice {
			t.Errorf("parse(%q) = %q, %q, %v", id, card, choice, ok)
		}
	}
	for _, bad := range []string{"", "x:1:2", "c:", "c:card", "c::x", "c:card:"} {
		if _, _, ok := parseCustomID(bad); ok {
			t.Errorf("parseCustomID(%q) accepted", bad)
		}
	}
}
