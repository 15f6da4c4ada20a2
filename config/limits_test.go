package config

import (
	"strings"
	"testing"
)

// limitsDoc is a valid config with two bots followed by lines (the limits
// section or more); its line 11 is lines[0].
func limitsDoc(lines ...string) []byte {
	return src(append([]string{
		"agents:",
		"  coder: {worktree: true}",
		"bots:",
		"  - name: a",
		"    platform: discord",
		"    agent: coder",
		"    discord: {token: t}",
		"  - name: b",
		"    platform: discord",
		"    agent: coder",
	}, append([]string{"    discord: {token: t}"}, lines...)...)...)
}

func TestLimitsAndWorktreeParse(t *testing.T) {
	c := mustParse(t, limitsDoc(
		"limits:",
		"  - bot: a",
		"    per_user: {usd_per_day: 20, turns_per_hour: 60}",
		"    total: {usd_per_month: 500.5}",
		"    exempt_admins: true",
		"    tz: Europe/Berlin",
		"  - {bot: b, per_user: {usd_per_month: 3}}",
	), nil)
	if !c.Agents["coder"].Worktree {
		t.Error("agents.coder.worktree = false, want true")
	}
	a := c.LimitFor("a")
	if a == nil {
		t.Fatal("no limit for bot a")
	}
	if a.PerUser != (Budget{USDPerDay: 20, TurnsPerHour: 60}) || a.Total != (Budget{USDPerMonth: 500.5}) || !a.ExemptAdmins {
		t.Errorf("limit a = %+v", *a)
	}
	if a.Location == nil || a.Location.String() != "Europe/Berlin" {
		t.Errorf("limit a location = %v, want Europe/Berlin", a.Location)
	}
	b := c.LimitFor("b")
	if b == nil || b.TZ != "UTC" || b.Location == nil || b.Location.String() != "UTC" || b.ExemptAdmins || !b.Total.IsZero() {
		t.Errorf("limit b = %+v, want tz UTC by default, admins not exempt, no total", b)
	}
	if c.LimitFor("nope") != nil {
		t.Error("LimitFor of an unknown bot is not nil")
	}
	sum := c.Summary()
	for _, want := range []string{"worktree=true", "a: per_user=$20/day,60 turns/h total=$500.5/month tz=Europe/Berlin exempt_admins=true"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
}

func TestWorktreeOffByDefault(t *testing.T) {
	c := mustParse(t, src("agents: {coder: {}}", "bots:", "  - {name: a, platform: discord, agent: coder, discord: {token: t}}"), nil)
	if c.Agents["coder"].Worktree {
		t.Error("worktree is on by default")
	}
	if len(c.Limits) != 0 {
		t.Errorf("limits = %v, want none by default", c.Limits)
	}
}

func TestWorktreeNotBoolean(t *testing.T) {
	data := strings.Replace(string(limitsDoc()), "{worktree: true}", "{worktree: yes}", 1)
	got := problemsOf(t, []byte(data), nil)
	if len(got) != 1 || got[0].Line != 2 || got[0].Path != "agents.coder.worktree" || !strings.Contains(got[0].Msg, `want true or false, got "yes"`) {
		t.Fatalf("problems:\n%s\nwant 2: agents.coder.worktree: want true or false", fmtProblems(got))
	}
}

// TestLimitsProblems: every rule of the limits section is reported at its
// line.
func TestLimitsProblems(t *testing.T) {
	type want struct {
		line int
		path string
		msg  string
	}
	cases := []struct {
		name  string
		lines []string
		want  []want
	}{
		{"unknown key", []string{"limits:", "  - bot: a", "    per_usr: {usd_per_day: 1}"},
			[]want{{14, "limits[0].per_usr", "unknown key (valid keys: bot, exempt_admins, per_user, total, tz)"}}},
		{"unknown budget key", []string{"limits:", "  - bot: a", "    per_user: {usd_per_hour: 1}"},
			[]want{{14, "limits[0].per_user.usd_per_hour", "unknown key (valid keys: turns_per_hour, usd_per_day, usd_per_month)"}}},
		{"missing bot", []string{"limits:", "  - per_user: {usd_per_day: 1}"},
			[]want{{13, "limits[0].bot", "bot is required"}}},
		{"unknown bot", []string{"limits:", "  - bot: c", "    total: {usd_per_day: 1}"},
			[]want{{13, "limits[0].bot", `bot "c" is not defined (bots: "a" or "b")`}}},
		{"duplicate bot", []string{"limits:", "  - {bot: a, total: {usd_per_day: 1}}", "  - {bot: a, total: {usd_per_day: 2}}"},
			[]want{{14, "limits[1].bot", "duplicate limits for bot \"a\" (also limits[0] at line 13)"}}},
		{"negative", []string{"limits:", "  - bot: a", "    per_user:", "      usd_per_day: -1", "      turns_per_hour: -5"},
			[]want{{15, "limits[0].per_user.usd_per_day", "must not be negative"}, {16, "limits[0].per_user.turns_per_hour", "must not be negative"}}},
		{"not a number", []string{"limits:", "  - bot: a", "    total: {usd_per_day: lots}"},
			[]want{{14, "limits[0].total.usd_per_day", `want a number (e.g. 20 or 12.5), got "lots"`}}},
		{"not finite", []string{"limits:", "  - bot: a", "    total: {usd_per_day: .inf}"},
			[]want{{14, "limits[0].total.usd_per_day", "want a number"}}},
		{"turns not an integer", []string{"limits:", "  - bot: a", "    total: {turns_per_hour: 1.5}"},
			[]want{{14, "limits[0].total.turns_per_hour", "want an integer"}}},
		{"no limit", []string{"limits:", "  - bot: a", "    per_user: {usd_per_day: 0}"},
			[]want{{13, "limits[0]", "sets no limit"}}},
		{"bad time zone", []string{"limits:", "  - bot: a", "    total: {usd_per_day: 1}", "    tz: Mars/Olympus"},
			[]want{{15, "limits[0].tz", `unknown time zone "Mars/Olympus"`}}},
		{"local time zone", []string{"limits:", "  - {bot: a, tz: Local, total: {usd_per_day: 1}}"},
			[]want{{13, "limits[0].tz", `unknown time zone "Local"`}}},
		{"exempt_admins not a boolean", []string{"limits:", "  - {bot: a, exempt_admins: maybe, total: {usd_per_day: 1}}"},
			[]want{{13, "limits[0].exempt_admins", "want true or false"}}},
		{"monthly limit with short retention", []string{"retention: 7d", "limits:", "  - bot: a", "    per_user: {usd_per_month: 10}"},
			[]want{{15, "limits[0].per_user.usd_per_month", "retention (7d) keeps usage for less than a month"}}},
		{"limits not a list", []string{"limits: {bot: a}"},
			[]want{{12, "limits", "want a list of limits, got a mapping"}}},
		{"entry not a mapping", []string{"limits:", "  - a"},
			[]want{{13, "limits[0]", "want a mapping, got a scalar"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := problemsOf(t, limitsDoc(tc.lines...), nil)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(got), len(tc.want), fmtProblems(got))
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Line != w.line || g.Path != w.path || !strings.Contains(g.Msg, w.msg) {
					t.Errorf("problem %d = %s, want %d: %s: …%s…", i, g, w.line, w.path, w.msg)
				}
			}
		})
	}
}
