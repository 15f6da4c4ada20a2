package web

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/web/feed"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/bridges/core/access/accesstest"
	"github.com/agentbridge/agentbridge/store"
)

// accessFixture is the console over the access property's fixture: the
// owner's conversation in every state, each web kind signed in (the
// removed one then removed by a reload, the signed-out one holding the
// cookie of a session that signed out, as another tab would).
type accessFixture struct {
	c       *Console
	clients map[accesstest.Kind]*client
	csrf    map[accesstest.Kind]string
}

func newAccessFixture(t *testing.T) *accessFixture {
	t.Helper()
	ctx := context.Background()
	cfg := testConfig(t, "127.0.0.1:9465", accesstest.UsersYAML(true))
	st := testStore(t)
	if _, err := accesstest.Conversations(ctx, st, "coder"); err != nil {
		t.Fatal(err)
	}
	c, srv, _ := newTestConsole(t, cfg, st)
	f := &accessFixture{c: c, clients: map[accesstest.Kind]*client{}, csrf: map[accesstest.Kind]string{}}
	for _, k := range accesstest.Kinds {
		if accesstest.Handoff(k) != "" {
			continue
		}
		cl := newClient(t, srv.URL)
		f.clients[k], f.csrf[k] = cl, cl.signIn(accesstest.Token(k))
	}
	// Signed out in another tab: the session ends, this copy of its cookie stays.
	sam := f.clients[accesstest.SignedOut]
	u, _ := url.Parse(srv.URL)
	cookies := sam.hc.Jar.Cookies(u)
	if s, _, _ := sam.do("POST", "/signout", url.Values{"csrf": {f.csrf[accesstest.SignedOut]}}, nil); s != http.StatusSeeOther {
		t.Fatalf("sign out: %d", s)
	}
	sam.hc.Jar.SetCookies(u, cookies)
	// Removed from web.users by a reload.
	apply, err := c.PrepareUsers(testConfig(t, "127.0.0.1:9465", accesstest.UsersYAML(false)))
	if err != nil {
		t.Fatal(err)
	}
	if err := apply(ctx); err != nil {
		t.Fatal(err)
	}
	return f
}

// webPath is one way into a conversation from the console: the action
// the decision is asked for, and whether the request was let through.
type webPath struct {
	name string
	act  access.Action
	try  func(f *accessFixture, k accesstest.Kind, s accesstest.State) bool
}

// notRefused: the request passed the access decision. Without a core
// behind the console, a message or click let through is answered 503
// ("not running yet"); a refusal is 401, 403, 404 or the sign-in page.
func notRefused(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusSeeOther:
		return false
	}
	return true
}

func post(f *accessFixture, k accesstest.Kind, s accesstest.State, what string, form url.Values) int {
	form.Set("csrf", f.csrf[k])
	st, _, _ := f.clients[k].do("POST", "/chat/"+accesstest.Thread(s)+"/"+what, form, nil)
	return st
}

var webPaths = []webPath{
	{"page", access.See, func(f *accessFixture, k accesstest.Kind, s accesstest.State) bool {
		st, body, _ := f.clients[k].do("GET", "/chat/"+accesstest.Thread(s), nil, nil)
		return st == http.StatusOK && strings.Contains(body, accesstest.Word(s))
	}},
	{"event stream", access.See, func(f *accessFixture, k accesstest.Kind, s accesstest.State) bool {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", f.clients[k].base+"/chat/"+accesstest.Thread(s)+"/events", nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := f.clients[k].hc.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false
		}
		sc := bufio.NewScanner(resp.Body) // its first events: the conversation's messages
		for sc.Scan() {
			if strings.Contains(sc.Text(), accesstest.Word(s)) {
				return true
			}
			if strings.HasPrefix(sc.Text(), "event: typing") {
				return false
			}
		}
		return false
	}},
	{"list", access.List, func(f *accessFixture, k accesstest.Kind, s accesstest.State) bool {
		q := ""
		if s == accesstest.Archived {
			q = "?archived=1"
		}
		_, body, _ := f.clients[k].do("GET", "/threads"+q, nil, nil)
		return strings.Contains(body, "/chat/"+accesstest.Thread(s))
	}},
	{"search", access.List, func(f *accessFixture, k accesstest.Kind, s accesstest.State) bool {
		q := "?q=" + accesstest.Word(s)
		if s == accesstest.Archived {
			q += "&archived=1"
		}
		_, body, _ := f.clients[k].do("GET", "/threads"+q, nil, nil)
		return strings.Contains(body, "/chat/"+accesstest.Thread(s))
	}},
	{"send", access.Write, func(f *accessFixture, k accesstest.Kind, s accesstest.State) bool {
		return notRefused(post(f, k, s, "send", url.Values{"text": {"hello"}}))
	}},
	{"stop", access.Write, func(f *accessFixture, k accesstest.Kind, s accesstest.State) bool {
		return notRefused(post(f, k, s, "stop", url.Values{}))
	}},
	{"card click", access.Decide, func(f *accessFixture, k accesstest.Kind, s accesstest.State) bool {
		return notRefused(post(f, k, s, "action", url.Values{"card": {"c1"}, "choice": {"allow"}}))
	}},
	{"rename", access.Manage, func(f *accessFixture, k accesstest.Kind, s accesstest.State) bool {
		return post(f, k, s, "rename", url.Values{"title": {""}}) == http.StatusSeeOther
	}},
	{"share", access.Manage, func(f *accessFixture, k accesstest.Kind, s accesstest.State) bool {
		// Sharing with the stranger as a viewer of an unshared or private
		// conversation changes what the table says of them: share with
		// the former participant and end it at once (the owner only).
		if post(f, k, s, "share", url.Values{"member": {accesstest.User(accesstest.Former)}, "role": {"viewer"}}) != http.StatusSeeOther {
			return false
		}
		post(f, accesstest.Owner, s, "share", url.Values{"member": {accesstest.User(accesstest.Former)}, "role": {""}})
		return true
	}},
}

// TestAccessPropertyWeb: every console path, for every person kind and
// conversation state, lets through exactly what the written table says.
func TestAccessPropertyWeb(t *testing.T) {
	f := newAccessFixture(t)
	for _, p := range webPaths {
		for _, k := range accesstest.Kinds {
			if accesstest.Handoff(k) != "" {
				continue
			}
			for _, s := range accesstest.States {
				want := accesstest.May(k, s, p.act)
				if got := p.try(f, k, s); got != want {
					t.Errorf("%s by the %s, %s conversation: let through %v, want %v (table: %s)", p.name, k, s, got, want, p.act)
				}
			}
		}
	}
}

// streamEvents opens path's event stream for cl and returns the names of
// its events as they come, and a channel closed when the stream ends.
func streamEvents(t *testing.T, cl *client, path string) (<-chan string, <-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", cl.base+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := cl.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("open %s: %d", path, resp.StatusCode)
	}
	names, closed := make(chan string, 256), make(chan struct{})
	go func() {
		defer close(closed)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				names <- name
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-closed })
	return names, closed
}

// awaitEnded waits (boundedly) for the "ended" event and the stream's
// end, and returns how long after since the event came.
func awaitEnded(t *testing.T, names <-chan string, closed <-chan struct{}, since time.Time) time.Duration {
	t.Helper()
	bound := time.After(30 * time.Second)
	for {
		select {
		case n := <-names:
			if n == "msg" {
				t.Error("a message was delivered after the revocation")
			}
			if n == "ended" {
				took := time.Since(since)
				select {
				case <-closed:
				case <-bound:
					t.Fatal("the stream stayed open after its ended event")
				}
				return took
			}
		case <-closed:
			for { // the names sent before the stream closed
				select {
				case n := <-names:
					if n == "ended" {
						return time.Since(since)
					}
					continue
				default:
				}
				break
			}
			t.Fatal("the stream closed without an ended event")
		case <-bound:
			t.Fatal("no ended event")
		}
	}
}

// TestRevocationEndsOpenStreams: each way access ends — the share ended,
// the conversation archived or deleted, a reload removing the person or
// changing their token, signing out in another tab — ends the person's
// open event stream of the conversation (and their list stream when the
// session ended) with a final "ended" event within a second, after which
// nothing is delivered. The owner's stream goes on.
func TestRevocationEndsOpenStreams(t *testing.T) {
	ctx := context.Background()
	bob := accesstest.Participant
	revocations := []struct {
		name    string
		session bool // the session ends: the list stream ends too
		revoke  func(t *testing.T, f *accessFixture)
	}{
		{"share ended", false, func(t *testing.T, f *accessFixture) {
			post(f, accesstest.Owner, accesstest.Shared, "share", url.Values{"member": {"bob"}, "role": {""}})
		}},
		{"share ended elsewhere, then a message", false, func(t *testing.T, f *accessFixture) {
			// Another replica ended it: no signal here, and the next event
			// is a message, which the decision, asked before it, withholds.
			thread := accesstest.Thread(accesstest.Shared)
			if err := f.c.st.ShareWebThread(ctx, accesstest.Bot, thread, "bob", ""); err != nil {
				t.Fatal(err)
			}
			m, err := f.c.st.AddWebMessage(ctx, store.WebMessage{ID: "m-after", Key: store.ConversationKey{Bot: accesstest.Bot, Channel: "ana", Thread: thread},
				Author: "ana", Text: "after the share"})
			if err != nil {
				t.Fatal(err)
			}
			f.c.hub.Publish(ctx, feed.ThreadTopic(thread), feed.Event{Kind: feed.Message, Thread: thread, Msg: m})
		}},
		{"archived", false, func(t *testing.T, f *accessFixture) {
			post(f, accesstest.Owner, accesstest.Shared, "archive", url.Values{"archived": {"1"}})
		}},
		{"deleted", false, func(t *testing.T, f *accessFixture) {
			post(f, accesstest.Owner, accesstest.Shared, "delete", url.Values{"agent": {"keep"}})
		}},
		{"removed by reload", true, func(t *testing.T, f *accessFixture) {
			yaml := strings.Replace(accesstest.UsersYAML(false), "    - { name: bob,", "    - { name: bobby,", 1)
			reload(t, f.c, yaml)
		}},
		{"token changed by reload", true, func(t *testing.T, f *accessFixture) {
			reload(t, f.c, strings.Replace(accesstest.UsersYAML(false), accesstest.Token(bob), "bob-new-token-0123456789", 1))
		}},
		{"signed out in another tab", true, func(t *testing.T, f *accessFixture) {
			other := newClient(t, f.clients[bob].base)
			u, _ := url.Parse(other.base)
			other.hc.Jar.SetCookies(u, f.clients[bob].hc.Jar.Cookies(u))
			if s, _, _ := other.do("POST", "/signout", url.Values{"csrf": {f.csrf[bob]}}, nil); s != http.StatusSeeOther {
				t.Fatalf("sign out: %d", s)
			}
		}},
	}
	for _, rv := range revocations {
		t.Run(rv.name, func(t *testing.T) {
			f := newAccessFixture(t)
			path := "/chat/" + accesstest.Thread(accesstest.Shared) + "/events"
			bobNames, bobClosed := streamEvents(t, f.clients[bob], path)
			bobList, bobListClosed := streamEvents(t, f.clients[bob], "/events")
			anaNames, anaClosed := streamEvents(t, f.clients[accesstest.Owner], path)
			waitEvent(t, bobNames, "typing") // the stream is open and caught up
			waitEvent(t, anaNames, "typing")
			start := time.Now()
			rv.revoke(t, f)
			if took := awaitEnded(t, bobNames, bobClosed, start); took > time.Second {
				t.Errorf("the stream ended %v after the revocation, want within 1s", took)
			}
			if rv.session {
				if took := awaitEnded(t, bobList, bobListClosed, start); took > time.Second {
					t.Errorf("the list stream ended %v after the revocation, want within 1s", took)
				}
			}
			// Nothing more reaches bob; the owner still follows her conversation
			// (unless she deleted it).
			if rv.name != "deleted" {
				f.c.hub.Publish(ctx, feed.ThreadTopic(accesstest.Thread(accesstest.Shared)), feed.Event{Kind: feed.Typing, Thread: accesstest.Thread(accesstest.Shared), On: true})
				waitEvent(t, anaNames, "typing")
				select {
				case <-anaClosed:
					t.Error("the owner's stream ended")
				default:
				}
			}
		})
	}
}

// reload applies a config with users yaml to the console, as a reload does.
func reload(t *testing.T, c *Console, yaml string) {
	t.Helper()
	apply, err := c.PrepareUsers(testConfig(t, "127.0.0.1:9465", yaml))
	if err != nil {
		t.Fatal(err)
	}
	if err := apply(context.Background()); err != nil {
		t.Fatal(err)
	}
}
