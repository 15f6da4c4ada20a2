package web

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/bridges/core/access/accesstest"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/store"
)

// TestSessionsFollowTheTable: !sessions and !resume reach other
// conversations of the web console's channel of one person only as the
// written table says (Resume): in a conversation the owner shared with
// him, the participant's !sessions lists none of her conversations (not
// their first prompts), and his !resume of her private session is
// refused, nothing moved; the owner lists and resumes her own.
func TestSessionsFollowTheTable(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig(t, "127.0.0.1:9466", accesstest.UsersYAML(true))
	st := testStore(t)
	if _, err := accesstest.Conversations(ctx, st, "coder"); err != nil {
		t.Fatal(err)
	}
	c, srv, _ := newTestConsole(t, cfg, st)
	bridgetest.RunCoreOn(t, cfg, st, map[string]bridges.Platform{"console": c}, nil)
	waitRunning(t, c)
	ana, bob := newClient(t, srv.URL), newClient(t, srv.URL)
	anaCSRF, bobCSRF := ana.signIn(accesstest.Token(accesstest.Owner)), bob.signIn(accesstest.Token(accesstest.Participant))
	key := func(s accesstest.State) bridges.ConversationKey {
		return bridges.ConversationKey{Bot: accesstest.Bot, Channel: "ana", Thread: accesstest.Thread(s)}
	}
	// A session with a secret first prompt in each of her conversations
	// she can still write in (archived: writing resumes it).
	states := []accesstest.State{accesstest.Private, accesstest.Shared, accesstest.Unshared, accesstest.Archived}
	sessions := map[accesstest.State]string{}
	for _, s := range states {
		secret := "secret-" + string(s)
		if st := ana.sendForm(accesstest.Thread(s), anaCSRF, secret, nil); st != http.StatusNoContent {
			t.Fatalf("ana sends in %s: %d", s, st)
		}
		waitStored(t, c, key(s), func(m store.WebMessage) bool { return strings.Contains(m.Text, "pong: "+secret) })
		conv, err := st.GetConversation(ctx, store.ConversationKey(key(s)))
		if err != nil || conv.SessionID == "" {
			t.Fatalf("%s: no session: %v", s, err)
		}
		sessions[s] = conv.SessionID
	}
	if err := st.ArchiveWebThread(ctx, accesstest.Bot, accesstest.Thread(accesstest.Archived), true); err != nil {
		t.Fatal(err) // writing restored nothing, but make sure
	}

	listed := func(who *client, csrf string, in accesstest.State) string {
		t.Helper()
		if s := who.sendForm(accesstest.Thread(in), csrf, "!sessions", nil); s != http.StatusNoContent {
			t.Fatalf("!sessions: %d", s)
		}
		return waitStored(t, c, key(in), func(m store.WebMessage) bool {
			return strings.Contains(m.Text, "Sessions here") || strings.Contains(m.Text, "No sessions here")
		}).Text
	}
	// The participant, in the conversation shared with him.
	bobList := listed(bob, bobCSRF, accesstest.Shared)
	for _, s := range states {
		shown := strings.Contains(bobList, sessions[s][:8])
		if want := accesstest.May(accesstest.Participant, s, access.Resume); shown != want {
			t.Errorf("bob's !sessions shows the %s conversation: %v, want %v\n%s", s, shown, want, bobList)
		}
		if strings.Contains(bobList, "secret-"+string(s)) && !accesstest.May(accesstest.Participant, s, access.Resume) {
			t.Errorf("bob's !sessions shows the first prompt of the %s conversation", s)
		}
	}
	// His !resume of her private session, in a new conversation of his own
	// and in the shared one: refused, nothing moved.
	for _, in := range []string{"bobnew00001", accesstest.Thread(accesstest.Shared)} {
		if s := bob.sendForm(in, bobCSRF, "!resume "+sessions[accesstest.Private][:8], nil); s != http.StatusNoContent {
			t.Fatalf("!resume: %d", s)
		}
		k := bridges.ConversationKey{Bot: accesstest.Bot, Channel: "bob", Thread: in}
		if in != "bobnew00001" {
			k = key(accesstest.Shared)
		}
		waitStored(t, c, k, func(m store.WebMessage) bool { return strings.Contains(m.Text, "not yours to resume") })
	}
	// Every other kind that signs in, from a conversation of their own:
	// !resume of each of her sessions as the table says (Resume: none).
	for _, k := range []accesstest.Kind{accesstest.Viewer, accesstest.Former, accesstest.Stranger, accesstest.Admin} {
		cl := newClient(t, srv.URL)
		csrf := cl.signIn(accesstest.Token(k))
		own := bridges.ConversationKey{Bot: accesstest.Bot, Channel: accesstest.User(k), Thread: "own" + strings.ReplaceAll(string(k), "-", "") + "001"}
		for _, s := range states {
			if st := cl.sendForm(own.Thread, csrf, "!resume "+sessions[s][:8], nil); st != http.StatusNoContent {
				t.Fatalf("%s !resume: %d", k, st)
			}
			want := "not yours to resume"
			if accesstest.May(k, s, access.Resume) {
				want = "Resumed session"
			}
			waitStored(t, c, own, func(m store.WebMessage) bool {
				return strings.Contains(m.Text, sessions[s][:8]) && strings.Contains(m.Text, want)
			})
		}
	}
	if conv, err := st.GetConversation(ctx, store.ConversationKey(key(accesstest.Private))); err != nil || conv.SessionID != sessions[accesstest.Private] {
		t.Errorf("ana's private session moved: %q, %v", conv.SessionID, err)
	}
	// The owner lists her own (the private one from her private one).
	anaList := listed(ana, anaCSRF, accesstest.Private)
	for _, s := range states {
		if shown, want := strings.Contains(anaList, sessions[s][:8]), accesstest.May(accesstest.Owner, s, access.Resume); shown != want {
			t.Errorf("ana's !sessions shows the %s conversation: %v, want %v\n%s", s, shown, want, anaList)
		}
	}
}
