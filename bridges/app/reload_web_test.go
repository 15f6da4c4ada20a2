package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/webtest"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// TestReloadWebBot: a web bot added to a running bridge whose console
// serves web users gets its chat pages and answers, without a restart; a
// web bot removed stops (its adapter's Run returns) and its pages take no
// new message. Adding one where no console runs is refused as needing a
// restart.
func TestReloadWebBot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "bridge.yaml")
	const base = `data_dir: ./data
http: { listen: "127.0.0.1:0" }
agents:
  coder: { sandbox: none }
bots:
  - name: team
    platform: slack
    agent: coder
    slack: { bot_token: xoxb-1, app_token: xapp-1 }
%s
web:
  users: [{ name: ana, role: admin, token: "${WEB_TOKEN}" }]
`
	const webBot = "  - name: console\n    platform: web\n    agent: coder\n"
	write := func(bots string) {
		t.Helper()
		testkit.WriteFile(t, path, fmt.Sprintf(base, bots))
	}
	const token = "web-token-0123456789abcdef0123456789"
	env := func(k string) (string, bool) { return token, k == "WEB_TOKEN" }
	write("")
	cfg, err := LoadConfig(path, env)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(dir, "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() }) // after the core stops (cleanups run last first)
	logger := slog.New(slog.DiscardHandler)
	console, err := newWebConsole(cfg, st, logger, false, nil)
	if err != nil || console == nil {
		t.Fatalf("web console: %v", err)
	}
	srv := httptest.NewServer(console.Handler())
	t.Cleanup(srv.Close) // after the event stream's cleanup has closed it
	live := config.NewLive(cfg, time.Now())
	rc := bridgetest.RunCoreOn(t, live, st, map[string]bridges.Platform{"team": bridgetest.New(bridges.Limits{MaxMessageRunes: 4000})}, nil)
	testkit.WaitUntil(t, "the condition", 2*time.Second, func() bool { return rc.Running() })
	logs := &testkit.SyncBuffer{}
	r := &reloader{path: path, lookupEnv: env, live: live, core: rc.Core, console: console, st: st, now: time.Now,
		log:  slog.New(slog.NewTextHandler(logs, nil)),
		bots: &botSet{logger: logger, release: map[bridges.Platform]func(){}}}

	ana := webtest.SignIn(t, srv.URL+"/signin#token="+token)
	if _, home := ana.Get("/"); strings.Contains(home, `action="/new"`) || strings.Contains(home, `href="/new"`) {
		t.Fatal("the home page offers a chat before there is a web bot")
	}

	write(webBot)
	if err := r.reload(ctx, triggerSignal, false); err != nil {
		t.Fatalf("reload adding the web bot: %v", err)
	}
	testkit.WaitUntil(t, "the condition", 2*time.Second, func() bool { return botState(rc, "console") == bridges.ConnRunning })
	ana.NewChat()
	events := ana.Events()
	ana.Send("hello web")
	events.Wait(t, "pong: hello web", false, 10*time.Second)

	write("")
	if err := r.reload(ctx, triggerSignal, false); err != nil {
		t.Fatalf("reload removing the web bot: %v", err)
	}
	if botState(rc, "console") != "" {
		t.Error("the removed web bot is still listed")
	}
	if path, _ := ana.Get("/new"); strings.HasPrefix(path, "/chat/") {
		t.Errorf("a removed web bot still opens conversations (%s)", path)
	}
	resp, err := ana.HTTP.PostForm(ana.Base+"/chat/"+ana.Thread+"/send", url.Values{"text": {"after removal"}, "csrf": {ana.CSRF}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a message to the removed web bot: status %d, want 404", resp.StatusCode)
	}

	// Without a console (no http listener), a web bot cannot be added live.
	r.console = nil
	write(webBot)
	if err := r.reload(ctx, triggerSignal, false); err == nil || !strings.Contains(err.Error(), "bots[console] added") ||
		!strings.Contains(err.Error(), "needs a restart") {
		t.Errorf("adding a web bot without a console: %v", err)
	}
}

// botState is bot's connection state in rc ("" when the core has none).
func botState(rc *bridgetest.Core, bot string) bridges.ConnState {
	for _, s := range rc.BotStates() {
		if s.Bot == bot {
			return s.State
		}
	}
	return ""
}
