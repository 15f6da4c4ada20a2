package config

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/config/profile"
)

// diffBase is a config with two bots, a profile, a limit and a schedule;
// each case of TestCompare edits one line of it.
var diffBase = []string{
	"data_dir: ./data",
	"agents:",
	"  coder:",
	"    model: sonnet",
	"    env: { ANTHROPIC_API_KEY: \"${KEY}\" }",
	"    rules:",
	"      - { tool: Read, action: allow }",
	"bots:",
	"  - name: team",
	"    platform: slack",
	"    agent: coder",
	"    slack: { bot_token: \"${BOT}\", app_token: \"xapp-1\" }",
	"    access: { users: [U1], admins: [U9] }",
	"  - name: ops",
	"    platform: discord",
	"    agent: coder",
	"    discord: { token: \"tok-ops-1\" }",
	"limits:",
	"  - { bot: team, tz: Europe/Berlin, per_user: { usd_per_day: 5 } }",
	"schedules:",
	"  - { name: standup, bot: team, channel: C1, cron: \"0 9 * * 1-5\", tz: Europe/Berlin, prompt: hi }",
}

func TestCompare(t *testing.T) {
	env := map[string]string{"KEY": "sk-ant-one", "BOT": "xoxb-one"}
	old := mustParse(t, src(diffBase...), env)
	edit := func(from, to string) []string {
		out := slices.Clone(diffBase)
		i := slices.Index(out, from)
		if i < 0 {
			t.Fatalf("no line %q", from)
		}
		out[i] = to
		return out
	}
	cases := []struct {
		name                         string
		lines                        []string
		env                          map[string]string
		keys, restart, respawn       []string
		contain                      []string
		added, removed, restartedBot []string
	}{
		{name: "same file reloaded: nothing (time zones loaded twice compare equal)", lines: diffBase},
		{name: "access list", lines: edit("    access: { users: [U1], admins: [U9] }", "    access: { users: [U1, U2], admins: [U9] }"),
			keys: []string{"bots[team].access.users"}},
		{name: "rule added applies at once", lines: append(slices.Clone(diffBase[:7]), append([]string{"      - { tool: Bash, match: \"rm *\", action: deny }"}, diffBase[7:]...)...),
			keys: []string{"agents.coder.rules"}},
		{name: "model: live agents replaced", lines: edit("    model: sonnet", "    model: haiku"),
			keys: []string{"agents.coder.model"}, respawn: []string{"coder"}},
		{name: "rotated secret in the environment: the key, never the value", lines: diffBase, env: map[string]string{"KEY": "sk-ant-two", "BOT": "xoxb-one"},
			keys: []string{"agents.coder.env"}, respawn: []string{"coder"}},
		{name: "bot token: the bot restarts", lines: diffBase, env: map[string]string{"KEY": "sk-ant-one", "BOT": "xoxb-two"},
			keys: []string{"bots[team].slack"}, restartedBot: []string{"team"}},
		{name: "bot removed", lines: append(slices.Clone(diffBase[:13]), diffBase[17:]...), keys: []string{"bots[ops]"}, removed: []string{"ops"}},
		{name: "limit", lines: edit("  - { bot: team, tz: Europe/Berlin, per_user: { usd_per_day: 5 } }", "  - { bot: team, tz: Europe/Berlin, per_user: { usd_per_day: 1 } }"),
			keys: []string{"limits"}},
		{name: "schedule", lines: edit("  - { name: standup, bot: team, channel: C1, cron: \"0 9 * * 1-5\", tz: Europe/Berlin, prompt: hi }",
			"  - { name: standup, bot: team, channel: C1, cron: \"0 10 * * 1-5\", tz: Europe/Berlin, prompt: hi }"), keys: []string{"schedules"}},
		{name: "data_dir needs a restart", lines: edit("data_dir: ./data", "data_dir: ./other"),
			keys: []string{"data_dir"}, restart: []string{"data_dir"}},
		{name: "sandbox applies live: agents replaced with the new one", lines: edit("    model: sonnet", "    sandbox: none"),
			keys: []string{"agents.coder.model", "agents.coder.sandbox"}, respawn: []string{"coder"}, contain: []string{"coder"}},
		{name: "network applies live", lines: edit("    model: sonnet", "    network: { mode: host }"),
			keys: []string{"agents.coder.model", "agents.coder.network"}, respawn: []string{"coder"}, contain: []string{"coder"}},
		{name: "resources apply live", lines: edit("    model: sonnet", "    resources: { memory: 1GiB }"),
			keys: []string{"agents.coder.model", "agents.coder.resources"}, respawn: []string{"coder"}},
		{name: "new profile applies live", lines: edit("      - { tool: Read, action: allow }", "      - { tool: Read, action: allow }\n  other:\n    model: haiku"),
			keys: []string{"agents.other"}, contain: []string{"other"}},
		{name: "new worktree profile in a sandbox needs a restart", lines: edit("      - { tool: Read, action: allow }",
			"      - { tool: Read, action: allow }\n  other:\n    worktree: true\n    sandbox: bwrap"),
			keys: []string{"agents.other"}, restart: []string{"agents.other"}, contain: []string{"other"}},
		{name: "mcp servers: agents replaced", lines: edit("    model: sonnet", "    model: sonnet\n    mcp_servers: { files: { command: /usr/bin/mcp-files } }"),
			keys: []string{"agents.coder.mcp_servers"}, respawn: []string{"coder"}},
		{name: "retention applies live", lines: append([]string{"retention: 30d"}, diffBase...), keys: []string{"retention"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := env
			if tc.env != nil {
				e = tc.env
			}
			d := Compare(old, mustParse(t, src(tc.lines...), e))
			for _, c := range []struct {
				what      string
				got, want []string
			}{{"keys", d.Keys, tc.keys}, {"restart", d.Restart, tc.restart}, {"respawn", d.ProfilesRespawn, tc.respawn},
				{"added", d.BotsAdded, tc.added}, {"removed", d.BotsRemoved, tc.removed}, {"restarted bots", d.BotsRestarted, tc.restartedBot},
				{"containment", d.Containment, tc.contain}} {
				if !slices.Equal(c.got, c.want) {
					t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
				}
			}
			if d.Empty() != (len(tc.keys) == 0) {
				t.Errorf("Empty() = %v with keys %q", d.Empty(), d.Keys)
			}
			for _, k := range d.Keys {
				for _, secret := range []string{"sk-ant", "xoxb", "tok-ops"} {
					if strings.Contains(k, secret) {
						t.Errorf("key %q holds a secret", k)
					}
				}
			}
		})
	}
}

// TestCompareRestart: what the running bridge cannot change is named in
// Restart: the store, and the sandbox of a profile with worktrees.
func TestCompareRestart(t *testing.T) {
	env := map[string]string{"KEY": "sk-ant-one", "BOT": "xoxb-one"}
	old := mustParse(t, src(diffBase...), env)
	next := mustParse(t, src(diffBase...), env)
	next.Store.Driver = StorePostgres
	if d := Compare(old, next); !slices.Equal(d.Restart, []string{"store"}) {
		t.Errorf("store: restart = %q", d.Restart)
	}
	wt := func(sb string) *Config {
		c := mustParse(t, src(diffBase...), env)
		c.Agents["coder"].Worktree, c.Agents["coder"].Sandbox = true, sb
		return c
	}
	if d := Compare(wt(profile.SandboxBwrap), wt(profile.SandboxNone)); !slices.Equal(d.Restart, []string{"agents.coder.sandbox"}) {
		t.Errorf("worktree profile's sandbox: restart = %q", d.Restart)
	}
}

func TestLive(t *testing.T) {
	a, b := &Config{DataDir: "a"}, &Config{DataDir: "b"}
	t0 := time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC)
	l := NewLive(a, t0)
	if g := l.Generation(); l.Current() != a || g.Number != 1 || g.Trigger != "start" || !g.At.Equal(t0) {
		t.Fatalf("NewLive: %+v", g)
	}
	g := l.Set(b, t0.Add(time.Minute), "file")
	if l.Current() != b || g.Number != 2 || g != l.Generation() || g.Trigger != "file" {
		t.Fatalf("Set: %+v, current %v", g, l.Current().DataDir)
	}
	var s Source = a
	if s.Current() != a {
		t.Error("a *Config is not its own Source")
	}
	if (&Live{}).Current() != nil || (&Live{}).Generation().Number != 0 {
		t.Error("zero Live is not empty")
	}
}
