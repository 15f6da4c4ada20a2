package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestCSRFAndRoles(t *testing.T) {
	_, srv, _ := newTestConsole(t, testConfig(t, "127.0.0.1:9464", usersYAML), nil)
	ana, bob := newClient(t, srv.URL), newClient(t, srv.URL)
	anaCSRF := ana.signIn(anaToken)
	bobCSRF := bob.signIn(bobToken)

	// Roles: the admin page is 403 for a user, 200 for an admin.
	if s, body, _ := bob.do("GET", "/admin", nil, nil); s != http.StatusForbidden || !strings.Contains(body, "admins only") {
		t.Errorf("bob /admin: %d", s)
	}
	if s, body, _ := ana.do("GET", "/admin", nil, nil); s != http.StatusOK || !strings.Contains(body, "console") {
		t.Errorf("ana /admin: %d", s)
	}
	if strings.Contains(mustGet(t, bob, "/"), `href="/admin"`) {
		t.Error("a user's page links to the admin page")
	}

	// CSRF: every POST needs the session's own token.
	posts := []string{"/chat/abcdefgh12/send", "/chat/abcdefgh12/action", "/chat/abcdefgh12/stop", "/signout"}
	for _, p := range posts {
		for _, tc := range []struct {
			name   string
			form   url.Values
			header map[string]string
		}{
			{"none", url.Values{"text": {"x"}}, nil},
			{"another session's", url.Values{"text": {"x"}, "csrf": {bobCSRF}}, nil},
			{"cross-site", url.Values{"text": {"x"}, "csrf": {anaCSRF}}, map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}},
		} {
			if s, _, _ := ana.do("POST", p, tc.form, tc.header); s != http.StatusForbidden {
				t.Errorf("POST %s with %s token: %d, want 403", p, tc.name, s)
			}
		}
	}
	// With the token (form field or header) the request gets past CSRF; the
	// core is not running here, hence 503.
	if s, _, _ := ana.do("POST", "/chat/abcdefgh12/send", url.Values{"text": {"x"}, "csrf": {anaCSRF}}, nil); s != http.StatusServiceUnavailable {
		t.Errorf("POST with form token: %d, want 503 (no core)", s)
	}
	if s, _, _ := ana.do("POST", "/chat/abcdefgh12/send", url.Values{"text": {"x"}}, map[string]string{"X-CSRF-Token": anaCSRF}); s != http.StatusServiceUnavailable {
		t.Errorf("POST with header token: %d, want 503 (no core)", s)
	}
}

func TestDemoLabel(t *testing.T) {
	cfg := testConfig(t, "127.0.0.1:9464", usersYAML)
	for _, demo := range []bool{false, true} {
		c, err := New(Options{Config: cfg, Store: testStore(t), Demo: demo})
		if err != nil {
			t.Fatal(err)
		}
		srv := newServer(t, c)
		cl := newClient(t, srv)
		cl.signIn(anaToken)
		for _, p := range []string{"/", "/admin", "/chat/abcdefgh12"} {
			if got := strings.Contains(mustGet(t, cl, p), "Demo — scripted model, not Claude"); got != demo {
				t.Errorf("demo %v: %s shows the demo label: %v", demo, p, got)
			}
		}
	}
}
