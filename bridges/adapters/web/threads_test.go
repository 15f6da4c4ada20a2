package web

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/admin"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/store"
)

// stopRecorder is the core as the operator pages see it, noting which
// conversations' agents were stopped.
type stopRecorder struct {
	admin.Operator
	mu      sync.Mutex
	stopped []string
}

func (s *stopRecorder) StopAgent(ctx context.Context, conversationID, by string) error {
	s.mu.Lock()
	s.stopped = append(s.stopped, conversationID+" by "+by)
	s.mu.Unlock()
	return s.Operator.StopAgent(ctx, conversationID, by)
}

func (s *stopRecorder) calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.stopped)
}

// listStream opens path's event stream (the start page's /events) and
// returns a channel that receives the name of every event it sends.
func listStream(t *testing.T, cl *client, path string) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", cl.base+path, nil)
	resp, err := cl.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan string, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				select {
				case out <- name:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return out
}

// waitEvent waits for an event named name on ch.
func waitEvent(t *testing.T, ch <-chan string, name string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case got := <-ch:
			if got == name {
				return
			}
		case <-timeout:
			t.Fatalf("no %q event", name)
		}
	}
}

// TestConversationManagement: over HTTP, with the core behind the console,
// the owner renames, searches, shares (viewer, then participant),
// archives and deletes a conversation (keeping or removing the agent's
// session); teammates see what is shared with them, live, and only act as
// their role allows.
func TestConversationManagement(t *testing.T) {
	cfg := testConfig(t, "127.0.0.1:9464", usersYAML+"    - { name: cleo, role: user, token: \"cleo-token-0123456789\" }\n")
	st := testStore(t)
	c, srv, _ := newTestConsole(t, cfg, st)
	core := bridgetest.RunCoreOn(t, cfg, st, map[string]bridges.Platform{"console": c}, nil)
	ops := &stopRecorder{Operator: core.Core}
	c.SetOperator(ops)
	waitRunning(t, c)
	ana, bob, cleo := newClient(t, srv.URL), newClient(t, srv.URL), newClient(t, srv.URL)
	anaCSRF, bobCSRF, cleoCSRF := ana.signIn(anaToken), bob.signIn(bobToken), cleo.signIn("cleo-token-0123456789")
	ctx := context.Background()
	key := bridges.ConversationKey{Bot: "console", Channel: "ana", Thread: "threadpg01"}
	post := func(cl *client, csrf, path string, form url.Values) int {
		t.Helper()
		form.Set("csrf", csrf)
		s, body, _ := cl.do("POST", path, form, nil)
		if s >= 400 {
			t.Logf("POST %s: %d %s", path, s, body)
		}
		return s
	}

	anaList := listStream(t, ana, "/events")
	bobList := listStream(t, bob, "/events")
	if s := ana.sendForm(key.Thread, anaCSRF, "Migrate the billing database to Postgres, table by table, without downtime", nil); s != http.StatusNoContent {
		t.Fatalf("send: %d", s)
	}
	waitEvent(t, anaList, "list") // the new conversation appears without a reload
	waitStored(t, c, key, func(m store.WebMessage) bool { return strings.Contains(m.Text, "pong: Migrate") })
	if page := mustGet(t, ana, "/"); !strings.Contains(page, `href="/chat/threadpg01">Migrate the billing database to Postgres…</a>`) {
		t.Errorf("default title not the first message, short: %s", page)
	}

	// Rename: only the owner; the list and the heading follow.
	if s := post(bob, bobCSRF, "/chat/"+key.Thread+"/rename", url.Values{"title": {"mine now"}}); s != http.StatusNotFound {
		t.Errorf("bob renames ana's conversation: %d, want 404", s)
	}
	if s := post(ana, anaCSRF, "/chat/"+key.Thread+"/rename", url.Values{"title": {"  PG   migration  "}}); s != http.StatusSeeOther {
		t.Fatalf("rename: %d", s)
	}
	waitEvent(t, anaList, "list")
	if page := mustGet(t, ana, "/chat/"+key.Thread); !strings.Contains(page, `<h1 id="chat-title">PG migration</h1>`) {
		t.Error("renamed title not shown")
	}

	// Search: titles and messages (the agent's answers too), prefixes.
	for q, want := range map[string]bool{"migration": true, "billing downt": true, "pong": true, "kubernetes": false} {
		if got := strings.Contains(mustGet(t, ana, "/threads?q="+url.QueryEscape(q)), `href="/chat/threadpg01"`); got != want {
			t.Errorf("search %q found it = %v, want %v", q, got, want)
		}
	}
	// A result shows the part of the message that matched, the match marked.
	if list := mustGet(t, ana, "/threads?q=table+by"); !strings.Contains(list, `database to Postgres, <mark>table by</mark> table, without downtime`) {
		t.Errorf("search result without the matching message's snippet: %s", list)
	}
	if strings.Contains(mustGet(t, bob, "/threads?q=migration"), "threadpg01") {
		t.Error("bob finds ana's conversation by search")
	}

	// Share with bob to read: he sees it live, reads it, cannot write or stop.
	if s := post(ana, anaCSRF, "/chat/"+key.Thread+"/share", url.Values{"member": {"nobody"}, "role": {"viewer"}}); s != http.StatusBadRequest {
		t.Errorf("share with an unknown user: %d, want 400", s)
	}
	if s := post(ana, anaCSRF, "/chat/"+key.Thread+"/share", url.Values{"member": {"bob"}, "role": {"viewer"}}); s != http.StatusSeeOther {
		t.Fatalf("share: %d", s)
	}
	waitEvent(t, bobList, "list")
	if list := mustGet(t, bob, "/"); !strings.Contains(list, "PG migration") || !strings.Contains(list, "shared by ana") {
		t.Errorf("bob's list lacks the shared conversation: %s", list)
	}
	page := mustGet(t, bob, "/chat/"+key.Thread)
	if !strings.Contains(page, "pong: Migrate") || strings.Contains(page, `id="composer"`) || strings.Contains(page, `id="manage"`) {
		t.Error("bob's read-only view: wrong")
	}
	if s := bob.sendForm(key.Thread, bobCSRF, "hi", nil); s != http.StatusForbidden {
		t.Errorf("viewer sends: %d, want 403", s)
	}
	if s := post(bob, bobCSRF, "/chat/"+key.Thread+"/stop", url.Values{}); s != http.StatusForbidden {
		t.Errorf("viewer stops: %d, want 403", s)
	}
	for _, action := range []string{"rename", "archive", "delete", "share"} {
		if s := post(bob, bobCSRF, "/chat/"+key.Thread+"/"+action, url.Values{"title": {"x"}, "archived": {"1"}, "agent": {"keep"}, "member": {"cleo"}, "role": {"viewer"}}); s != http.StatusForbidden {
			t.Errorf("viewer %s: %d, want 403", action, s)
		}
	}
	if s, _, _ := cleo.do("GET", "/chat/"+key.Thread, nil, nil); s != http.StatusNotFound {
		t.Errorf("cleo (not shared) GET: %d, want 404", s)
	}
	if s := cleo.sendForm(key.Thread, cleoCSRF, "hi", nil); s != http.StatusNotFound {
		t.Errorf("cleo (not shared) sends: %d, want 404", s)
	}

	// As a participant bob writes: his message goes to ana's conversation.
	if s := post(ana, anaCSRF, "/chat/"+key.Thread+"/share", url.Values{"member": {"bob"}, "role": {"participant"}}); s != http.StatusSeeOther {
		t.Fatalf("share: %d", s)
	}
	if s := bob.sendForm(key.Thread, bobCSRF, "bob adds a detail", nil); s != http.StatusNoContent {
		t.Fatalf("participant sends: %d", s)
	}
	waitStored(t, c, key, func(m store.WebMessage) bool { return m.Author == "bob" })
	waitStored(t, c, key, func(m store.WebMessage) bool { return strings.Contains(m.Text, "pong: bob adds") })

	// Archive: out of the list, into the archived one, agent stopped.
	conv, err := c.st.GetConversation(ctx, store.ConversationKey(key))
	if err != nil {
		t.Fatal(err)
	}
	if s := post(ana, anaCSRF, "/chat/"+key.Thread+"/archive", url.Values{"archived": {"1"}}); s != http.StatusSeeOther {
		t.Fatalf("archive: %d", s)
	}
	if strings.Contains(mustGet(t, ana, "/"), "threadpg01") || !strings.Contains(mustGet(t, ana, "/?archived=1"), "threadpg01") {
		t.Error("archive: lists wrong")
	}
	if got := ops.calls(); !slices.Equal(got, []string{conv.ID + " by ana"}) {
		t.Errorf("agents stopped = %v", got)
	}
	if s := post(ana, anaCSRF, "/chat/"+key.Thread+"/archive", url.Values{"archived": {"0"}}); s != http.StatusSeeOther || !strings.Contains(mustGet(t, ana, "/"), "threadpg01") {
		t.Errorf("restore: %d", s)
	}

	// Delete, keeping the agent's session: gone for everybody, session kept.
	if s := post(ana, anaCSRF, "/chat/"+key.Thread+"/delete", url.Values{}); s != http.StatusBadRequest {
		t.Errorf("delete without a choice: %d, want 400", s)
	}
	if s := post(ana, anaCSRF, "/chat/"+key.Thread+"/delete", url.Values{"agent": {"keep"}}); s != http.StatusSeeOther {
		t.Fatalf("delete: %d", s)
	}
	waitEvent(t, bobList, "list")
	for _, cl := range []*client{ana, bob} {
		if s, _, _ := cl.do("GET", "/chat/"+key.Thread, nil, nil); s != http.StatusNotFound {
			t.Errorf("deleted conversation: GET %d, want 404", s)
		}
		if strings.Contains(mustGet(t, cl, "/"), "threadpg01") {
			t.Error("deleted conversation still listed")
		}
	}
	if s := ana.sendForm(key.Thread, anaCSRF, "again", nil); s != http.StatusNotFound {
		t.Errorf("send into a deleted conversation: %d, want 404", s)
	}
	if after, _ := c.st.GetConversation(ctx, store.ConversationKey(key)); after.SessionID != conv.SessionID {
		t.Errorf("session changed on delete-keep: %s → %s", conv.SessionID, after.SessionID)
	}
	if got := ops.calls(); len(got) != 2 {
		t.Errorf("agents stopped = %v, want the archive's and the delete's", got)
	}

	// Delete, removing the session: the conversation gets a fresh one.
	key2 := bridges.ConversationKey{Bot: "console", Channel: "ana", Thread: "threadci02"}
	if s := ana.sendForm(key2.Thread, anaCSRF, "why is CI red", nil); s != http.StatusNoContent {
		t.Fatalf("send: %d", s)
	}
	waitStored(t, c, key2, func(m store.WebMessage) bool { return strings.Contains(m.Text, "pong: why") })
	conv2, err := c.st.GetConversation(ctx, store.ConversationKey(key2))
	if err != nil {
		t.Fatal(err)
	}
	if s := post(ana, anaCSRF, "/chat/"+key2.Thread+"/delete", url.Values{"agent": {"remove"}}); s != http.StatusSeeOther {
		t.Fatalf("delete: %d", s)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		after, _ := c.st.GetConversation(ctx, store.ConversationKey(key2))
		if after.SessionID != conv2.SessionID {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("delete-remove kept the agent's session")
		}
	}
	if strings.Contains(mustGet(t, ana, "/"), "threadci02") {
		t.Error("deleted conversation still listed")
	}
}

// TestSharedViewerCardAuthority: a teammate the conversation is shared with
// sees its open card, but a click decides nothing unless the bot's access
// makes them an approver (DESIGN §11); the owner, who started the turn,
// decides it.
func TestSharedViewerCardAuthority(t *testing.T) {
	cfg := testConfig(t, "127.0.0.1:9464", usersYAML)
	st := testStore(t)
	c, srv, _ := newTestConsole(t, cfg, st)
	core := bridgetest.RunCoreOn(t, cfg, st, map[string]bridges.Platform{"console": c}, func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted})
		s.Ask(streamjson.PermissionRequest{RequestID: "req-1", ToolName: "Bash", Input: json.RawMessage(`{"command":"rm -r build"}`), ToolUseID: "tu-1"})
		s.Reply(m, "finished")
	})
	waitRunning(t, c)
	ana, bob := newClient(t, srv.URL), newClient(t, srv.URL)
	anaCSRF, bobCSRF := ana.signIn(anaToken), bob.signIn(bobToken)
	key := bridges.ConversationKey{Bot: "console", Channel: "ana", Thread: "threadcard1"}
	if s := ana.sendForm(key.Thread, anaCSRF, "clean up", nil); s != http.StatusNoContent {
		t.Fatalf("send: %d", s)
	}
	card := waitStored(t, c, key, func(m store.WebMessage) bool { return m.CardID != "" && len(m.Buttons) > 0 })
	share := url.Values{"csrf": {anaCSRF}, "member": {"bob"}, "role": {store.WebViewer}}
	if s, _, _ := ana.do("POST", "/chat/"+key.Thread+"/share", share, nil); s != http.StatusSeeOther {
		t.Fatalf("share: %d", s)
	}
	if page := mustGet(t, bob, "/chat/"+key.Thread); !strings.Contains(page, `data-ask="approval"`) || !strings.Contains(page, "rm -r build") {
		t.Fatal("bob does not see the open card")
	} else if strings.Contains(page, `data-choice="allow"`) {
		t.Error("bob, who may not decide the card, is offered its buttons")
	}
	bobEvents := listStream(t, bob, "/chat/"+key.Thread+"/events")
	waitEvent(t, bobEvents, "typing") // the stream caught up
	click := url.Values{"csrf": {bobCSRF}, "card": {card.CardID}, "choice": {"allow"}}
	if s, _, _ := bob.do("POST", "/chat/"+key.Thread+"/action", click, map[string]string{"X-Requested-With": "fetch"}); s != http.StatusNoContent {
		t.Fatalf("bob's click: %d", s)
	}
	sess, err := core.Pool.WaitSession(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	waitEvent(t, bobEvents, "notice") // the core's private refusal, on bob's page only
	if d := sess.Decisions(); len(d) != 0 {
		t.Fatalf("a viewer's click decided the card: %+v", d)
	}
	click.Set("csrf", anaCSRF)
	if s, _, _ := ana.do("POST", "/chat/"+key.Thread+"/action", click, map[string]string{"X-Requested-With": "fetch"}); s != http.StatusNoContent {
		t.Fatalf("ana's click: %d", s)
	}
	waitStored(t, c, key, func(m store.WebMessage) bool { return strings.Contains(m.Text, "finished") })
	if d := sess.Decisions(); len(d) != 1 || !d[0].Allow {
		t.Errorf("decisions = %+v, want ana's allow", d)
	}
}
