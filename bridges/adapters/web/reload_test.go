package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/web/admin"
)

// TestReloadUsers: a reload that removes bob and gives ana a new token
// ends their sessions at once (the next request is signed out), and the
// new token signs in; until applied, a prepared reload changes nothing.
func TestReloadUsers(t *testing.T) {
	cfg := testConfig(t, "127.0.0.1:0", usersYAML)
	c, srv, _ := newTestConsole(t, cfg, nil)
	ana, bob := newClient(t, srv.URL), newClient(t, srv.URL)
	ana.signIn(anaToken)
	bob.signIn(bobToken)

	const anaNew = "ana-new-token-0123456789"
	next := testConfig(t, "127.0.0.1:0", "web:\n  users:\n    - { name: ana, role: admin, token: \""+anaNew+"\" }\n")
	next.DataDir = cfg.DataDir
	apply, err := c.PrepareUsers(next)
	if err != nil {
		t.Fatal(err)
	}
	if s, _, _ := bob.do("GET", "/", nil, nil); s != http.StatusOK {
		t.Fatalf("a prepared reload already signed bob out: %d", s)
	}
	if err := apply(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name, cl := range map[string]*client{"bob (removed)": bob, "ana (new token)": ana} {
		if s, _, resp := cl.do("GET", "/", nil, nil); s != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "/signin") {
			t.Errorf("%s: GET / after the reload = %d, want a redirect to sign in", name, s)
		}
	}
	again := newClient(t, srv.URL)
	again.signIn(anaNew)
	if s, _, _ := again.do("GET", "/admin/config", nil, nil); s != http.StatusOK {
		t.Errorf("ana with the new token: /admin/config = %d", s)
	}
}

// TestAdminConfigShowsReloads: the operator view's config page shows the
// generation in force and the last refused reload with its lines.
func TestAdminConfigShowsReloads(t *testing.T) {
	h := newAdminHarness(t)
	at := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	h.c.SetConfigStatus(func() admin.ConfigStatus {
		return admin.ConfigStatus{Generation: 4, At: at, Trigger: "file", Changed: []string{"bots[team].access.users"},
			Refused: []string{"/etc/agentbridge/bridge.yaml:12: bots[0]: unknown key \"colour\""}, RefusedAt: at.Add(time.Minute)}
	})
	code, body := h.get(t, h.ana, "/admin/config")
	for _, want := range []string{`id="config-generation"`, "Generation 4", "bots[team].access.users", `id="config-refused"`,
		"bridge.yaml:12: bots[0]: unknown key &#34;colour&#34;"} {
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("config page (%d) lacks %q", code, want)
		}
	}
}
