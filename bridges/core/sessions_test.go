package core_test

import (
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// short is what !sessions shows of a session id.
func short(id string) string { return id[:8] }

// TestSessionsAndResume: !sessions lists the channel's sessions; !resume in
// a new thread moves one there — the next spawn of the new thread resumes
// the old session id, the old thread starts a fresh one.
func TestSessionsAndResume(t *testing.T) {
	h := start(t, setup{script: toolScript})
	old, fresh := key("T1"), key("T2")
	h.send(old, "m1", "alice", "refactor the parser\nwith details")
	h.waitText(old, "pong: refactor the parser")
	h.waitLedgerFinal(old)
	sid := h.conversation(old).SessionID

	h.send(fresh, "c1", "bob", "!sessions")
	list := h.waitText(fresh, "🗂")
	if want := "• `" + short(sid) + "` — just now · $0.001 · “refactor the parser”"; !strings.Contains(list.Text, want) {
		t.Errorf("!sessions = %q, want a line %q", list.Text, want)
	}
	if strings.Contains(list.Text, "with details") {
		t.Errorf("the summary is more than the first line: %q", list.Text)
	}

	h.send(fresh, "c2", "bob", "!resume "+short(sid))
	resumed := h.waitText(fresh, "↩️ Resumed session")
	if !strings.Contains(resumed.Text, "“refactor the parser”") {
		t.Errorf("resume notice = %q", resumed.Text)
	}
	h.waitText(old, "↪️ @bob continued this thread's session `"+short(sid)+"` in another thread")
	if got := h.conversation(fresh).SessionID; got != sid {
		t.Fatalf("the new thread's session = %q, want %q", got, sid)
	}
	if got := h.conversation(old).SessionID; got == sid || got == "" {
		t.Fatalf("the old thread kept session %q", got)
	}

	h.send(fresh, "m2", "bob", "carry on")
	h.waitText(fresh, "pong: carry on")
	s2, err := h.pool.WaitSessionFor(ctxT(t), h.conversation(fresh).ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Opts.SessionID != sid || !s2.Opts.Resume {
		t.Errorf("the new thread spawned session %q resume=%v, want %q resumed", s2.Opts.SessionID, s2.Opts.Resume, sid)
	}
	if h.session(1).Exited() == false {
		t.Error("the old thread's idle process still runs after its session moved")
	}
	h.send(old, "m3", "alice", "hello again")
	h.waitText(old, "pong: hello again")
	s3, err := h.pool.WaitSessionFor(ctxT(t), h.conversation(old).ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	if s3.Opts.SessionID == sid || s3.Opts.Resume {
		t.Errorf("the old thread spawned %q resume=%v, want a fresh session", s3.Opts.SessionID, s3.Opts.Resume)
	}

	// The listing follows the session: summary and cost moved with it.
	h.send(key("T3"), "c3", "carol", "!sessions")
	list = h.waitText(key("T3"), "🗂")
	if !strings.Contains(list.Text, "`"+short(sid)+"` — just now · $0.002 · “refactor the parser”") ||
		!strings.Contains(list.Text, "“hello again”") {
		t.Errorf("!sessions after the move = %q", list.Text)
	}
}

// TestResumeRefusals: what !resume refuses, each with its reason, and that
// a refused resume changes no session.
func TestResumeRefusals(t *testing.T) {
	h := start(t, setup{script: toolScript, access: config.Access{Admins: []string{"dave"}}})
	busy, idle := key("B1"), key("I1")
	elsewhere := bridges.ConversationKey{Bot: "bot", Channel: "C2", Thread: "E1"}
	h.send(idle, "m1", "alice", "idle work")
	h.waitText(idle, "pong: idle work")
	h.send(elsewhere, "m2", "erin", "private work")
	h.waitText(elsewhere, "pong: private work")
	h.send(busy, "m3", "alice", "hang")
	h.waitText(busy, "working on it")
	h.waitLedgerFinal(idle)
	idleSID, busySID, elseSID := h.conversation(idle).SessionID, h.conversation(busy).SessionID, h.conversation(elsewhere).SessionID

	cases := []struct {
		name, thread, user, arg, want string
	}{
		{"usage", "R1", "alice", "", "Usage: `!resume ID`"},
		{"too short", "R2", "alice", "abc", "at least 4 characters"},
		{"unknown", "R3", "alice", "ffffffff", "No session `ffffffff` of this bot"},
		{"live elsewhere", "R4", "alice", short(busySID), "is live in another thread: its agent is working there"},
		{"another channel, not a participant", "R5", "bob", short(elseSID), "a conversation of another channel that you did not take part in"},
		{"own thread", string(idle.Thread), "alice", short(idleSID), "This thread already has session"},
		{"thread with its own session", string(busy.Thread), "alice", short(idleSID), "The agent is working in this thread"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := key(tc.thread)
			h.send(k, "r-"+tc.name, tc.user, strings.TrimSpace("!resume "+tc.arg))
			h.waitText(k, tc.want)
		})
	}
	// A thread with a session of its own (and history) refuses too.
	h.send(key("H1"), "h1", "alice", "history here")
	h.waitText(key("H1"), "pong: history here")
	h.waitLedgerFinal(key("H1"))
	h.send(key("H1"), "h2", "alice", "!resume "+short(idleSID))
	h.waitText(key("H1"), "This thread has its own session already")

	for k, want := range map[bridges.ConversationKey]string{idle: idleSID, busy: busySID, elsewhere: elseSID} {
		if got := h.conversation(k).SessionID; got != want {
			t.Errorf("%s: session %q after refused resumes, want %q", k, got, want)
		}
	}

	// A session of another agent profile (the bot's profile changed since).
	ctx := ctxT(t)
	prof, _, err := h.st.GetOrCreateConversation(ctx, store.ConversationKey{Bot: "bot", Channel: "C1", Thread: "P1"}, "other", "alice")
	if err != nil {
		t.Fatal(err)
	}
	const profSID = "abcdef12-0000-4000-8000-000000000000"
	if err := h.st.SetSessionID(ctx, prof.ID, profSID); err != nil {
		t.Fatal(err)
	}
	if err := h.st.NoteActivity(ctx, prof.ID, "old profile"); err != nil {
		t.Fatal(err)
	}
	h.send(key("R8"), "r8", "alice", "!resume abcdef12")
	h.waitText(key("R8"), "belongs to another agent profile (`other`)")

	// Someone who took part in another channel's conversation may resume it
	// here; so may an admin.
	e2 := bridges.ConversationKey{Bot: "bot", Channel: "C2", Thread: "E2"}
	h.send(e2, "e2a", "frank", "started by frank")
	h.waitText(e2, "pong: started by frank")
	h.send(e2, "e2b", "erin", "erin joins")
	h.waitText(e2, "pong: erin joins")
	h.waitLedgerFinal(e2)
	h.send(key("OK2"), "ok2", "erin", "!resume "+short(h.conversation(e2).SessionID))
	h.waitText(key("OK2"), "↩️ Resumed session")
	h.send(key("OK1"), "ok1", "dave", "!resume "+short(elseSID))
	h.waitText(key("OK1"), "↩️ Resumed session `"+short(elseSID)+"`")
}
