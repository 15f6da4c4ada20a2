package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestTwoSigninForms (issue 39): the older of two sign-in forms of one
// browser works, and a form too old to work shows a fresh form with a
// message, never a raw CSRF error.
func TestTwoSigninForms(t *testing.T) {
	_, srv, _ := newTestConsole(t, testConfig(t, "127.0.0.1:9464", usersYAML), nil)
	c := newClient(t, srv.URL)
	_, older, _ := c.do("GET", "/signin", nil, nil)
	_, newer, _ := c.do("GET", "/signin", nil, nil) // a second tab
	if csrfIn(t, older) != csrfIn(t, newer) {
		t.Error("a second sign-in page of the same browser got another form token: the first tab's form no longer works")
	}
	if s, body, resp := c.do("POST", "/signin", url.Values{"csrf": {csrfIn(t, older)}, "token": {anaToken}, "next": {"/"}}, nil); s != http.StatusSeeOther {
		t.Fatalf("sign-in from the older tab: %d %s\n%s", s, resp.Header.Get("Location"), body)
	}
	// The newer tab's form, posted after the older one signed in: its
	// cookie is gone, the person is signed in: on to the page.
	if s, _, resp := c.do("POST", "/signin", url.Values{"csrf": {csrfIn(t, newer)}, "token": {anaToken}, "next": {"/chat/abcdefgh12"}}, nil); s != http.StatusSeeOther || resp.Header.Get("Location") != "/chat/abcdefgh12" {
		t.Errorf("the newer tab's form once signed in: %d to %q, want 303 to the page", s, resp.Header.Get("Location"))
	}

	// A form whose cookie is gone, not signed in: a fresh form that says so.
	stale := newClient(t, srv.URL)
	s, body, _ := stale.do("POST", "/signin", url.Values{"csrf": {"0123456789abcdef0123456789abcdef"}, "token": {anaToken}}, nil)
	if s != http.StatusForbidden || !strings.Contains(body, `id="signin-form"`) || !strings.Contains(body, "sign in again") {
		t.Errorf("a stale sign-in form: %d, want 403 with a fresh form saying to sign in again:\n%s", s, body)
	}
	if s, _, _ := stale.do("POST", "/signin", url.Values{"csrf": {csrfIn(t, body)}, "token": {anaToken}}, nil); s != http.StatusSeeOther {
		t.Errorf("signing in with the fresh form: %d, want 303", s)
	}
}

// TestNotFoundPage: an unknown address gets a 404 page in the console's
// style (its layout and stylesheet), not Go's plain text.
func TestNotFoundPage(t *testing.T) {
	_, srv, _ := newTestConsole(t, testConfig(t, "127.0.0.1:9464", usersYAML), nil)
	c := newClient(t, srv.URL)
	c.signIn(anaToken)
	for _, cl := range []*client{c, newClient(t, srv.URL)} {
		s, body, resp := cl.do("GET", "/no/such/page", nil, nil)
		if s != http.StatusNotFound || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
			!strings.Contains(body, `href="/static/style.css"`) || !strings.Contains(body, `id="error-message"`) {
			t.Errorf("GET /no/such/page: %d %s, want the console's 404 page:\n%s", s, resp.Header.Get("Content-Type"), body)
		}
	}
}

// The hint names the binary as it was started (bin/bridge under make run;
// a bare "bridge" on Debian is iproute2's).
func TestInvokedAs(t *testing.T) {
	for arg0, want := range map[string]string{"bin/bridge": "bin/bridge", "/usr/local/bin/bridge": "/usr/local/bin/bridge", "bridge": "bridge"} {
		if got := invokedAs(arg0); got != want {
			t.Errorf("invokedAs(%q) = %q, want %q", arg0, got, want)
		}
	}
}
