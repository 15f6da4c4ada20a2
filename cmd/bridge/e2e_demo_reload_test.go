package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/adapters/web/webtest"
	"github.com/agentbridge/agentbridge/bridges/app/healthz"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestDemoReloadE2E (issue 39): a bridge run with -demo keeps demo mode
// across a config reload. Adding a web user to bridge.yaml (which applies
// live) used to reload the config as written, without the demo model:
// every turn then failed under the Demo banner. After the reload, a new
// conversation's turn is still answered by the built-in scripted model.
func TestDemoReloadE2E(t *testing.T) {
	t.Parallel()
	claude := testkit.RequireClaude(t)
	dir := t.TempDir()
	home, workdir := filepath.Join(dir, "agent-home"), filepath.Join(dir, "work")
	for _, d := range []string{home, workdir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := "data_dir: ./data\nlog: { level: debug, format: text }\nhttp: { listen: \"{{HTTP}}\" }\nagents:\n" +
		agentYAML(claude, home, workdir, []string{"TZ=UTC"}, 0) + webBots
	env := []string{"WEB_TOKEN_ANA=" + anaWebToken, "WEB_TOKEN_BOB=" + bobWebToken, "WEB_TOKEN_CAROL=carol-web-token-0123456789"}
	p := startBridgeArgs(t, dir, cfg, []string{"-demo"}, env...)
	base := "http://" + p.addr
	// /healthz answers before the core runs the web bot; a send before that is
	// told to try again (503), which a busy machine showed.
	if !p.waitLog(ctxTimeout(t, e2eWait), `msg="bot connection state" bot=console state=running`) {
		t.Fatalf("the web bot never ran:\n%s", p.logs)
	}

	w := webtest.SignIn(t, base+"/signin#token="+anaWebToken)
	if page := w.NewChat(); !strings.Contains(page, `id="demo-label"`) {
		t.Fatalf("the chat page is not labelled as a demo")
	}
	ev := w.Events()
	w.Send("hello")
	ev.Wait(t, "This is agentbridge's demo mode", false, e2eWait)

	// Add a web user: the file watcher (or a SIGHUP) applies it live.
	path := filepath.Join(dir, "bridge.yaml")
	written := readFile(t, path)
	users := "    - { name: bob, role: user, token: \"${WEB_TOKEN_BOB}\" }\n"
	testkit.WriteFile(t, path, strings.Replace(written, users, users+"    - { name: carol, role: user, token: \"${WEB_TOKEN_CAROL}\" }\n", 1))
	ab := agentBridge{dir: dir, env: env}
	if out, err := reloadCmd(ab, path); err != nil && !strings.Contains(out, "unchanged") {
		t.Logf("bridge reload: %v\n%s", err, out) // the file watcher may have applied it first
	}
	hc := waitHealthConfig(t, p, func(hc healthz.Config) bool { return hc.Generation >= 2 || len(hc.Refused) > 0 })
	if len(hc.Refused) > 0 {
		t.Fatalf("the reload was refused: %v", hc.Refused)
	}
	webtest.SignIn(t, base+"/signin#token=carol-web-token-0123456789") // the user added signs in

	// A new conversation (a new agent, on the reloaded config) still talks
	// to the demo model.
	w.NewChat()
	ev = w.Events()
	w.Send("hello after the reload")
	ev.Wait(t, "This is agentbridge's demo mode", false, e2eWait)
	if logs := p.logs.String(); strings.Contains(logs, "could not sign in") {
		t.Errorf("a turn after the reload failed to reach the model:\n%s", logs)
	}
}
