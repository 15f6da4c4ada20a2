package discord

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
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
	if !posted.V2 || posted.Content != "" || posted.Text != card.Text {
		t.Errorf("card = %+v, want a Components V2 message showing its text", posted)
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
	if len(edited.Rows) != 0 || !edited.V2 || edited.Text != "**Bash** `make deploy` — denied by u2" {
		t.Errorf("edited card = %+v, want a V2 message with the text and no buttons", edited)
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

// Cards are laid out as Components V2 within Discord's limits: a long
// choice is a section (its whole text, a button beside it) that still
// clicks; a card of 25 long choices falls back to rows within 40
// components; an edit of a card made before a restart (the adapter no
// longer knows it is V2) is refused by Discord for want of the flag and
// made again as V2.
func TestCardsAsComponentsV2(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	r := startReady(t, f)
	id := f.SendMessage("100", guild, "u1", "pick", true)
	key := r.rec.waitMsg(t, id).Key
	long := "Use PostgreSQL for the storage layer, with a migration from SQLite (recommended)"
	card := bridges.Message{Text: "Which database?", CardID: "q-1", Buttons: []bridges.Button{
		{ID: "0", Label: long, Style: bridges.StylePrimary}, {ID: "1", Label: "SQLite"},
	}}
	ref, err := r.Post(t.Context(), key, card)
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	m, _ := f.Message(ref.ID)
	if !m.V2 || m.Text != "Which database?\n"+long || len(m.Rows) != 2 || m.Rows[0][0].Label != "Choose" || m.Rows[1][0].Label != "SQLite" {
		t.Fatalf("card = %+v", m)
	}
	f.Click(key.Thread, ref.ID, "u1", "c:q-1:0")
	if act := r.rec.waitAction(t); act.CardID != "q-1" || act.Choice != "0" {
		t.Errorf("action = %+v", act)
	}

	var many []bridges.Button
	for i := range 25 {
		many = append(many, bridges.Button{ID: fmt.Sprint(i), Label: fmt.Sprintf("Option %d: %s", i, long)})
	}
	ref2, err := r.Post(t.Context(), key, bridges.Message{Text: strings.Repeat("long text ", 500), CardID: "q-2", Buttons: many})
	if err != nil {
		t.Fatalf("Post 25 long choices: %v", err)
	}
	if m, _ := f.Message(ref2.ID); !m.V2 || len(m.Buttons()) != 25 {
		t.Errorf("card of 25 choices = %+v", m)
	}

	// A restart: a new adapter knows nothing of ref's card.
	r2 := newTestBridge(t, testBot(f))
	if err := r2.Edit(t.Context(), ref, bridges.Message{Text: "✅ SQLite, by u1"}); err != nil {
		t.Fatalf("Edit after a restart: %v", err)
	}
	if m, _ := f.Message(ref.ID); !m.V2 || m.Text != "✅ SQLite, by u1" || len(m.Rows) != 0 {
		t.Errorf("card after the edit = %+v", m)
	}
}
