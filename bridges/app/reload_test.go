package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// reloadBase is a config a reloader test starts from; %s is team's users.
const reloadBase = `data_dir: ./data
http: { listen: "" }
agents:
  coder: { sandbox: none }
bots:
  - name: team
    platform: slack
    agent: coder
    slack: { bot_token: "${SLACK_BOT_TOKEN}", app_token: xapp-1 }
    access: { users: [%s] }
`

// TestReloadAllOrNothing: a reload is refused whole — the generation in
// force, every bot's access and the running adapters stay as they were —
// when the file is invalid (the problem with its line, as check-config
// says it), unreadable, changes a key that needs a restart, or adds a bot
// whose adapter cannot open; the refusal shows in the reloader's status
// (/healthz, operator view) and the audit log until a reload succeeds,
// which applies everything at once.
func TestReloadAllOrNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "bridge.yaml")
	env := func(k string) (string, bool) {
		if k == "SLACK_BOT_TOKEN" {
			return "xoxb-reload-secret", true
		}
		return "", false
	}
	write := func(s string) {
		t.Helper()
		testkit.WriteFile(t, path, s)
	}
	write(fmt.Sprintf(reloadBase, "U1"))
	cfg, err := LoadConfig(path, env)
	if err != nil {
		t.Fatal(err)
	}
	live := config.NewLive(cfg, time.Now())
	rc := bridgetest.RunCore(t, live, map[string]bridges.Platform{"team": bridgetest.New(bridges.Limits{MaxMessageRunes: 4000})}, nil)
	testkit.WaitUntil(t, "the condition", 2*time.Second, func() bool { return rc.Running() })
	logs := &testkit.SyncBuffer{}
	r := &reloader{path: path, lookupEnv: env, live: live, core: rc.Core, st: rc.Store, now: time.Now,
		bots: &botSet{logger: slog.New(slog.DiscardHandler), release: map[bridges.Platform]func(){}},
		log:  slog.New(slog.NewTextHandler(logs, nil))}
	ctx := context.Background()

	users := func() []string { return live.Current().Bot("team").Access.Users }
	refusals := []struct {
		name, file, want string
	}{
		{"invalid", fmt.Sprintf(reloadBase, "U1, U2") + "    colour: blue\n", "bridge.yaml:11: bots[0]"},
		{"restart key", strings.Replace(fmt.Sprintf(reloadBase, "U1, U2"), "./data", "./elsewhere", 1), "data_dir changed: this needs a restart"},
		{"bot that cannot open", fmt.Sprintf(reloadBase, "U1, U2") +
			"  - name: phone\n    platform: whatsapp\n    agent: coder\n    whatsapp: { device_store: phone.db }\n", `bot "phone"`},
		{"unreadable", "", "read config"},
	}
	for _, tc := range refusals {
		if tc.file == "" {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		} else {
			write(tc.file)
		}
		err := r.reload(ctx, triggerSignal, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: reload = %v, want a refusal naming %q", tc.name, err, tc.want)
		}
		st := r.status()
		if live.Generation().Number != 1 || !slices.Equal(users(), []string{"U1"}) || st.Generation != 1 {
			t.Errorf("%s: half applied: generation %d, users %v", tc.name, live.Generation().Number, users())
		}
		if len(st.Refused) == 0 || !strings.Contains(strings.Join(st.Refused, "\n"), tc.want) || st.RefusedAt.IsZero() {
			t.Errorf("%s: status %+v does not show the refusal", tc.name, st)
		}
	}
	if n := len(r.bots.release); n != 0 {
		t.Errorf("%d adapters opened by refused reloads are still held", n)
	}

	write(fmt.Sprintf(reloadBase, "U1, U2"))
	if err := r.reload(ctx, triggerFile, false); err != nil {
		t.Fatalf("valid reload: %v", err)
	}
	if g := live.Generation(); g.Number != 2 || g.Trigger != triggerFile || !slices.Equal(users(), []string{"U1", "U2"}) {
		t.Errorf("after the valid reload: generation %+v, users %v", g, users())
	}
	if st := r.status(); len(st.Refused) != 0 || !slices.Equal(st.Changed, []string{"bots[team].access.users"}) {
		t.Errorf("status after success: %+v", st)
	}
	if err := r.reload(ctx, triggerSignal, false); err != errUnchanged || live.Generation().Number != 2 {
		t.Errorf("reload of the same file: %v, generation %d", err, live.Generation().Number)
	}

	audit, err := rc.Store.ConfigReloads(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(audit) != len(refusals)+1 || !audit[0].Applied || audit[0].Generation != 2 || audit[1].Applied {
		t.Fatalf("audit log: %+v", audit)
	}
	for _, a := range audit {
		if s := fmt.Sprint(a); strings.Contains(s, "xoxb-reload-secret") {
			t.Errorf("audit row holds a secret: %s", s)
		}
	}
	if strings.Contains(logs.String(), "xoxb-reload-secret") {
		t.Error("the reloader logged a secret")
	}
}
