package web

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/config"
)

// sessionCookieOf returns the session cookie c's jar holds for base.
func sessionCookieOf(t *testing.T, c *client, base string) *http.Cookie {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, ck := range c.hc.Jar.Cookies(u) {
		if ck.Name == sessionCookie {
			return ck
		}
	}
	t.Fatalf("no session cookie in the jar")
	return nil
}

// withStolenCookie is a client that sends only ck: an attacker who copied
// the cookie out of the victim's browser.
func withStolenCookie(t *testing.T, base string, ck *http.Cookie) *client {
	t.Helper()
	c := newClient(t, base)
	u, _ := url.Parse(base)
	c.hc.Jar.SetCookies(u, []*http.Cookie{{Name: ck.Name, Value: ck.Value, Path: "/"}})
	return c
}

// signedIn reports whether c's session opens the home page.
func signedIn(t *testing.T, c *client) bool {
	t.Helper()
	s, _, _ := c.do("GET", "/", nil, nil)
	return s == http.StatusOK
}

// TestSignoutEndsSessionServerSide: a cookie copied before its owner signs
// out opens the console before, and is refused after (pages send to the
// sign-in page, posts get 401); the owner's other session stays.
func TestSignoutEndsSessionServerSide(t *testing.T) {
	_, srv, _ := newTestConsole(t, testConfig(t, "127.0.0.1:9464", usersYAML), nil)
	ana, anaLaptop := newClient(t, srv.URL), newClient(t, srv.URL)
	csrf := ana.signIn(anaToken)
	anaLaptop.signIn(anaToken)
	stolen := withStolenCookie(t, srv.URL, sessionCookieOf(t, ana, srv.URL))
	if !signedIn(t, stolen) {
		t.Fatal("the copied cookie does not open the console before sign-out")
	}
	if s, _, resp := ana.do("POST", "/signout", url.Values{"csrf": {csrf}}, nil); s != http.StatusSeeOther || resp.Header.Get("Location") != "/signin" {
		t.Fatalf("sign out: %d to %q", s, resp.Header.Get("Location"))
	}
	if s, _, resp := stolen.do("GET", "/", nil, nil); s != http.StatusSeeOther || resp.Header.Get("Location") != "/signin?next=%2F" {
		t.Errorf("the copied cookie after sign-out: GET / = %d to %q, want 303 to the sign-in page", s, resp.Header.Get("Location"))
	}
	if s, _, _ := stolen.do("POST", "/chat/abcdefgh12/send", url.Values{"text": {"x"}, "csrf": {csrf}}, nil); s != http.StatusUnauthorized {
		t.Errorf("the copied cookie after sign-out: POST send = %d, want 401", s)
	}
	if !signedIn(t, anaLaptop) {
		t.Error("signing out in one browser ended ana's other session")
	}
}

// TestTokenChangeEndsSessions: a new token for ana in the config (the
// bridge restarted on it, with the same data_dir and database) refuses
// her sessions, and they stay refused when the old token comes back; bob's
// session is untouched.
func TestTokenChangeEndsSessions(t *testing.T) {
	cfg := testConfig(t, "127.0.0.1:9464", usersYAML)
	st := testStore(t)
	_, srv, _ := newTestConsole(t, cfg, st)
	ana, bob := newClient(t, srv.URL), newClient(t, srv.URL)
	ana.signIn(anaToken)
	bob.signIn(bobToken)
	anaCk, bobCk := sessionCookieOf(t, ana, srv.URL), sessionCookieOf(t, bob, srv.URL)

	restart := func(anaTok string) string {
		t.Helper()
		c2 := *cfg
		c2.Web.Users = append([]config.WebUser(nil), cfg.Web.Users...)
		c2.Web.Users[0].Token = anaTok
		_, srv, _ := newTestConsole(t, &c2, st)
		return srv.URL
	}
	check := func(stage, base string) {
		t.Helper()
		if signedIn(t, withStolenCookie(t, base, anaCk)) {
			t.Errorf("%s: ana's old session still opens the console", stage)
		}
		if !signedIn(t, withStolenCookie(t, base, bobCk)) {
			t.Errorf("%s: bob's session was ended", stage)
		}
	}
	check("ana's token changed", restart("ana-rotated-token-0123456789"))
	check("ana's old token back", restart(anaToken))
}

func TestSessionChecks(t *testing.T) {
	ctx := context.Background()
	us, _, err := newUsers([]config.WebUser{{Name: "ana", Role: config.RoleAdmin, Token: anaToken}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st := testStore(t)
	s := &sessions{key: bytes.Repeat([]byte{7}, 32), users: us, st: st, log: slog.New(slog.DiscardHandler), now: func() time.Time { return now }}
	v, err := s.issue(ctx, us.byName("ana"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.check(ctx, v); got == nil || got.user.Name != "ana" || got.csrf == "" {
		t.Fatalf("check(issued) = %+v", got)
	}
	body, sig, _ := strings.Cut(v, ".")
	tampered := []string{"", v + "x", body + ".AAAA", strings.ToUpper(body[:4]) + body[4:] + "." + sig}
	for _, tv := range tampered {
		if s.check(ctx, tv) != nil {
			t.Errorf("tampered cookie %q accepted", tv)
		}
	}
	other := &sessions{key: bytes.Repeat([]byte{8}, 32), users: us, st: st, log: s.log, now: s.now}
	if other.check(ctx, v) != nil {
		t.Error("a cookie signed with another key was accepted")
	}
	now = now.Add(SessionLifetime + time.Second)
	if s.check(ctx, v) != nil {
		t.Error("an expired session was accepted")
	}
	now = now.Add(-SessionLifetime)
	// A new token for ana ends her sessions.
	us2, _, _ := newUsers([]config.WebUser{{Name: "ana", Role: config.RoleAdmin, Token: "ana-new-token-0123456"}}, t.TempDir())
	if (&sessions{key: s.key, users: us2, st: st, log: s.log, now: s.now}).check(ctx, v) != nil {
		t.Error("a session outlived its user's token change")
	}
	// A session ended on the server is refused although its cookie is
	// still validly signed.
	if err := s.end(ctx, v); err != nil {
		t.Fatal(err)
	}
	if s.check(ctx, v) != nil {
		t.Error("an ended session was accepted")
	}
}
