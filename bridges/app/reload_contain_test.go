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

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestReloadContainment: a profile's sandbox and network change without a
// restart — the live agent is replaced with the new sandbox at its next
// idle moment, resuming its session — and a new profile is set up and
// used; the store, though, still needs a restart, and the refusal names
// the key.
func TestReloadContainment(t *testing.T) {
	t.Parallel()
	testkit.NeedBwrap(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "bridge.yaml")
	const base = `data_dir: ./data
http: { listen: "" }
agents:
  coder: { sandbox: %s }
%s
bots:
  - name: team
    platform: slack
    agent: %s
    slack: { bot_token: xoxb-1, app_token: xapp-1 }
`
	write := func(sb, extra, agentName string) {
		t.Helper()
		testkit.WriteFile(t, path, fmt.Sprintf(base, sb, extra, agentName))
	}
	write("none", "", "coder")
	env := func(string) (string, bool) { return "", false }
	cfg, err := LoadConfig(path, env)
	if err != nil {
		t.Fatal(err)
	}
	live := config.NewLive(cfg, time.Now())
	plat := bridgetest.New(bridges.Limits{MaxMessageRunes: 4000})
	rc := bridgetest.RunCore(t, live, map[string]bridges.Platform{"team": plat}, nil)
	testkit.WaitUntil(t, "the condition", 2*time.Second, func() bool { return rc.Running() })
	logger := slog.New(slog.DiscardHandler)
	contain := newContainment(prometheus.NewRegistry(), logger)
	defer contain.close()
	if _, err := contain.build(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	r := &reloader{path: path, lookupEnv: env, live: live, core: rc.Core, st: rc.Store, now: time.Now, contain: contain,
		bots: &botSet{logger: logger, release: map[bridges.Platform]func(){}}, log: logger}
	ctx := context.Background()

	k := bridges.ConversationKey{Bot: "team", Channel: "C1", Thread: "T1"}
	send := func(k bridges.ConversationKey, id, text string) {
		t.Helper()
		if err := plat.Send(ctx, bridges.Inbound{Key: k, MsgID: id, UserID: "U1", UserName: "ana", Text: text}); err != nil {
			t.Fatal(err)
		}
		plat.WaitFor(t, k, 10*time.Second, "pong: "+text, func(m bridgetest.Msg) bool { return strings.Contains(m.Text, "pong: "+text) })
	}
	send(k, "m1", "one")
	if sb := rc.Pool.Acquisitions()[0].Opts.Sandbox; sb != nil && sb.Name() != "none" {
		t.Fatalf("first agent's sandbox = %s, want none", sb.Name())
	}

	// The sandbox, and a new profile the bot now uses.
	write("bwrap", "  reviewer: { sandbox: bwrap, network: { mode: none } }", "reviewer")
	if err := r.reload(ctx, triggerSignal, false); err != nil {
		t.Fatalf("reload of the sandbox and a new profile: %v", err)
	}
	testkit.WaitUntil(t, "the condition", 2*time.Second, func() bool { return rc.Pool.Sessions()[0].Exited() }) // the idle agent is replaced
	send(k, "m2", "two")                                                                                        // T1 keeps its profile, now in bwrap
	acq := rc.Pool.Acquisitions()
	last := acq[len(acq)-1]
	if last.Opts.Sandbox == nil || last.Opts.Sandbox.Name() != "bwrap" || !last.Opts.Resume || last.Limit.Profile != "coder" {
		t.Fatalf("after the reload T1's agent: profile %s, sandbox %v, resume %v; want coder in bwrap, resumed", last.Limit.Profile, last.Opts.Sandbox, last.Opts.Resume)
	}
	send(bridges.ConversationKey{Bot: "team", Channel: "C1", Thread: "T2"}, "m3", "three")
	acq = rc.Pool.Acquisitions()
	last = acq[len(acq)-1]
	if last.Limit.Profile != "reviewer" || last.Opts.Sandbox == nil || last.Opts.Sandbox.Name() != "bwrap" || last.Opts.Network.Mode != profile.NetworkNone {
		t.Fatalf("new conversation: profile %s, sandbox %v, network %q; want reviewer in bwrap without network", last.Limit.Profile, last.Opts.Sandbox, last.Opts.Network.Mode)
	}

	// What truly needs a restart is refused, naming the key.
	if err := os.WriteFile(path, []byte("store: { driver: postgres, dsn: \"postgres://x@localhost/db\" }\n"+
		fmt.Sprintf(base, "bwrap", "  reviewer: { sandbox: bwrap, network: { mode: none } }", "reviewer")), 0o600); err != nil {
		t.Fatal(err)
	}
	gen := live.Generation().Number
	err = r.reload(ctx, triggerSignal, false)
	if err == nil || !strings.Contains(err.Error(), "store changed: this needs a restart of the bridge") || live.Generation().Number != gen {
		t.Fatalf("store change: reload = %v, generation %d (was %d)", err, live.Generation().Number, gen)
	}
	if got := r.status().Refused; !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "store changed") }) {
		t.Errorf("status does not show the refusal: %q", got)
	}
}
