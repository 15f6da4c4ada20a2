package web

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/config"
)

func TestSignIn(t *testing.T) {
	_, srv, logs := newTestConsole(t, testConfig(t, "127.0.0.1:9464", usersYAML), nil)
	c := newClient(t, srv.URL)

	// Not signed in: pages send to the sign-in page, posts are refused.
	if s, _, resp := c.do("GET", "/chat/abcdefgh12", nil, nil); s != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/signin?next=") {
		t.Fatalf("GET chat signed out: %d %s", s, resp.Header.Get("Location"))
	}
	if s, _, _ := c.do("POST", "/chat/abcdefgh12/send", url.Values{"text": {"x"}}, nil); s != http.StatusUnauthorized {
		t.Errorf("POST signed out: %d, want 401", s)
	}

	_, page, resp := c.do("GET", "/signin", nil, nil)
	form := csrfIn(t, page)
	var signinCk *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == signinCookie {
			signinCk = ck
		}
	}
	if signinCk == nil || !signinCk.HttpOnly || signinCk.SameSite != http.SameSiteStrictMode {
		t.Fatalf("sign-in cookie = %+v", signinCk)
	}

	cases := []struct {
		name   string
		form   func(csrf string) url.Values
		status int
	}{
		{"no csrf", func(string) url.Values { return url.Values{"token": {anaToken}} }, http.StatusForbidden},
		{"wrong csrf", func(string) url.Values { return url.Values{"token": {anaToken}, "csrf": {"forged"}} }, http.StatusForbidden},
		{"wrong token", func(f string) url.Values { return url.Values{"token": {"nope-nope-nope-nope"}, "csrf": {f}} }, http.StatusUnauthorized},
	}
	for _, tc := range cases {
		if s, _, _ := c.do("POST", "/signin", tc.form(form), nil); s != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, s, tc.status)
		}
		_, page, _ = c.do("GET", "/signin", nil, nil) // a fresh form token
		form = csrfIn(t, page)
	}

	s, _, resp := c.do("POST", "/signin", url.Values{"token": {anaToken}, "csrf": {form}, "next": {"//evil.example/x"}}, nil)
	if s != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("sign in: %d to %q, want 303 to / (no open redirect)", s, resp.Header.Get("Location"))
	}
	var sess *http.Cookie
	for _, ck := range resp.Cookies() {
		if ck.Name == sessionCookie {
			sess = ck
		}
	}
	if sess == nil || !sess.HttpOnly || sess.SameSite != http.SameSiteStrictMode || sess.Secure {
		t.Fatalf("session cookie = %+v (want HttpOnly, SameSite=Strict, not Secure over http)", sess)
	}
	if s, body, _ := c.do("GET", "/", nil, nil); s != http.StatusOK || !strings.Contains(body, `id="whoami">ana`) {
		t.Fatalf("home: %d\n%s", s, body)
	}
	if strings.Contains(logs.String(), anaToken) {
		t.Error("logs contain the token")
	}

	// Behind an https proxy the cookies are Secure.
	c = newClient(t, srv.URL)
	_, page, _ = c.do("GET", "/signin", nil, map[string]string{"X-Forwarded-Proto": "https"})
	_, _, resp = c.do("POST", "/signin", url.Values{"token": {bobToken}, "csrf": {csrfIn(t, page)}}, map[string]string{"X-Forwarded-Proto": "https"})
	for _, ck := range resp.Cookies() {
		if ck.Name == sessionCookie && !ck.Secure {
			t.Errorf("session cookie over https is not Secure: %+v", ck)
		}
	}
}

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

func mustGet(t *testing.T, c *client, path string) string {
	t.Helper()
	s, body, _ := c.do("GET", path, nil, nil)
	if s != http.StatusOK {
		t.Fatalf("GET %s: %d", path, s)
	}
	return body
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

func TestGeneratedAdminToken(t *testing.T) {
	cfg := testConfig(t, "0.0.0.0:9464", "")
	st := testStore(t)
	c, srv, logs := newTestConsole(t, cfg, st)
	path := filepath.Join(cfg.DataDir, AdminTokenFile)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	raw, _ := os.ReadFile(path)
	token := strings.TrimSpace(string(raw))
	var out bytes.Buffer
	c.Announce(&out)
	if want := "http://127.0.0.1:9464/signin#token=" + token; !strings.Contains(out.String(), want) {
		t.Errorf("announcement lacks the sign-in link %s:\n%s", want, out.String())
	}
	if !strings.Contains(logs.String(), "non-loopback") || strings.Contains(logs.String(), token) {
		t.Errorf("want a plain-HTTP warning and no token in the logs:\n%s", logs.String())
	}
	// A later start prints the link again while nobody has signed in.
	again, err := New(Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	again.Announce(&out)
	if want := "http://127.0.0.1:9464/signin#token=" + token; !strings.Contains(out.String(), want) {
		t.Errorf("a second start before anybody signed in lacks the sign-in link %s:\n%s", want, out.String())
	}
	if cl := newClient(t, srv.URL); cl.signIn(token) == "" {
		t.Fatal("no session with the generated token")
	}

	// Once somebody signed in, a start reuses the token and does not print it.
	c2, err := New(Options{Config: cfg, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	c2.Announce(&out)
	if strings.Contains(out.String(), token) || !strings.Contains(out.String(), path) {
		t.Errorf("announcement after a sign-in: %q", out.String())
	}
	// A token file others can read is refused.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{Config: cfg, Store: st}); err == nil || !strings.Contains(err.Error(), "readable by other users") {
		t.Errorf("New with a 0644 token file: %v", err)
	}
}

func TestLoopbackListen(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:9464": true, "[::1]:9464": true, "localhost:9464": true,
		"0.0.0.0:9464": false, ":9464": false, "192.168.1.2:9464": false,
	} {
		if got := loopbackListen(addr); got != want {
			t.Errorf("loopbackListen(%q) = %v, want %v", addr, got, want)
		}
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
