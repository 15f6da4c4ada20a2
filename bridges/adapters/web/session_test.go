package web

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/adapters/web/auth"
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
		if ck.Name == auth.SessionCookie {
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
