package main

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/adapters/web/webtest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

var webLinkOut = regexp.MustCompile(`Open (http://\S+/signin#token=\S+) to sign in as admin\.`)

// TestWebLinkSignsIn: after somebody signed in, a start no longer prints
// the sign-in link, but `bridge web-link` prints one that signs a second
// browser in to the running bridge.
func TestWebLinkSignsIn(t *testing.T) {
	t.Parallel()
	ab := startAgentBridge(t, "bots:\n  - name: console\n    platform: web\n    agent: coder\n")
	m := regexp.MustCompile(`(?m)^    (http://\S+/signin#token=\S+)$`).FindStringSubmatch(ab.bridge.logs.String())
	if m == nil {
		t.Fatalf("the first start printed no sign-in link:\n%s", ab.bridge.logs)
	}
	first := webtest.SignIn(t, m[1])
	if path, _ := first.Get("/"); path == "/signin" {
		t.Fatal("the start link did not sign in")
	}

	code, out, stderr := runCLI(t, exampleEnv, "web-link", "-config", filepath.Join(ab.dir, "bridge.yaml"))
	link := webLinkOut.FindStringSubmatch(out)
	if code != exitOK || link == nil {
		t.Fatalf("web-link: code %d, stdout %q, stderr %q", code, out, stderr)
	}
	if link[1] != m[1] {
		t.Errorf("web-link printed %s, the start printed %s", link[1], m[1])
	}
	second := webtest.SignIn(t, link[1])
	if path, _ := second.Get("/"); path == "/signin" {
		t.Errorf("the web-link link did not sign in (GET / ended at %s)", path)
	}
	// Without signing in, GET / ends at the sign-in page (the check above
	// can fail).
	resp, err := http.Get(strings.Split(link[1], "/signin")[0] + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Request.URL.Path != "/signin" {
		t.Errorf("an anonymous GET / ended at %s, want /signin", resp.Request.URL.Path)
	}
}

// Before the bridge ever ran, web-link makes the admin token (0600) that
// the bridge will use and prints its link.
func TestWebLinkBeforeFirstRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "bridge.yaml")
	if err := os.WriteFile(path, config.Minimal(), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, exampleEnv, "web-link", "-config", path)
	link := webLinkOut.FindStringSubmatch(out)
	if code != exitOK || link == nil {
		t.Fatalf("web-link: code %d, stdout %q, stderr %q", code, out, stderr)
	}
	tokenFile := filepath.Join(dir, "data", "web-admin-token")
	raw, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := "http://127.0.0.1:9464/signin#token=" + strings.TrimSpace(string(raw)); link[1] != want {
		t.Errorf("link = %s, want %s", link[1], want)
	}
	if fi, err := os.Stat(tokenFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode: %v, %v", fi, err)
	}
	// A second run prints the same link.
	if _, again, _ := runCLI(t, exampleEnv, "web-link", "-config", path); !strings.Contains(again, link[1]) {
		t.Errorf("second run printed %q, want the same link", again)
	}
}

// With web.users there is no generated admin: web-link says how users
// sign in and prints no token; without a web console it is a usage error.
func TestWebLinkUsersAndNoConsole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "bridge.yaml")
	secret := "ana-secret-token-0123456789"
	cfg := string(config.Minimal()) + "web:\n  users:\n    - { name: ana, role: admin, token: \"" + secret + "\" }\n"
	testkit.WriteFile(t, path, cfg)
	code, out, stderr := runCLI(t, exampleEnv, "web-link", "-config", path)
	if code != exitOK || !strings.Contains(out, "web.users is configured (ana)") || !strings.Contains(out, "http://127.0.0.1:9464/signin") {
		t.Fatalf("web-link with users: code %d, stdout %q, stderr %q", code, out, stderr)
	}
	if strings.Contains(out, secret) {
		t.Error("web-link printed a user's token")
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "web-admin-token")); err == nil {
		t.Error("web-link made an admin token although web.users is set")
	}

	noWeb := strings.Replace(string(config.Minimal()), "platform: web  ", "platform: slack", 1)
	noWeb = strings.Replace(noWeb, "    agent: coder\n", "    agent: coder\n    slack: { bot_token: xoxb-1, app_token: xapp-1 }\n", 1)
	noWebPath := filepath.Join(dir, "noweb.yaml")
	testkit.WriteFile(t, noWebPath, noWeb)
	if code, _, stderr := runCLI(t, exampleEnv, "web-link", "-config", noWebPath); code != exitUsage || !strings.Contains(stderr, "no web console") {
		t.Errorf("web-link without a web console: code %d, stderr %q", code, stderr)
	}
}
