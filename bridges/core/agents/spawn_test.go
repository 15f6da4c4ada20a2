package agents_test

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
)

// spareHook is an agents.Worktrees that records the spawns it prepares.
type spareHook struct{ spare []bool }

func (h *spareHook) PrepareSpawn(_ context.Context, _ *profile.Agent, o agent.Options, spare bool) (agent.Options, error) {
	h.spare = append(h.spare, spare)
	return o, nil
}

func (h *spareHook) Status(*profile.Agent, string) string { return "" }

func (h *spareHook) Retire(context.Context, *profile.Agent, string, *slog.Logger) string { return "" }

// TestProfileOptions: a profile's spawn options carry its settings, the
// spawner's containment and cgroups, and hide the bridge's own files; a
// bypassPermissions the profile does not allow runs in default mode; an
// ACP agent is asked for no mode and gets the spawner's relay of the
// bridge's tools; a worktree profile gets the hook.
func TestProfileOptions(t *testing.T) {
	p := &profile.Agent{Name: "coder", Command: "claude", Args: []string{"--x"}, Workdir: "/srv/project",
		PermissionMode: profile.ModeBypass, Model: "opus", Resources: profile.Resources{Memory: 1 << 30, Processes: 64},
		MCPServers:   map[string]profile.MCPServer{"db": {Name: "db", Command: "dbmcp", Args: []string{"-v"}}},
		SandboxBinds: []profile.SandboxBind{{Path: "/srv/cache", Writable: true}}}
	cfg := &config.Config{DataDir: "/srv/data", Path: "/etc/bridge.yaml", Agents: map[string]*profile.Agent{"coder": p}}
	net := agent.Network{Mode: profile.NetworkNone}
	s := agents.Spawner{Containment: agents.Containment{Networks: map[string]agent.Network{"coder": net}}}

	o := s.ProfileOptions(cfg, p)
	switch {
	case o.Command != "claude" || !slices.Equal(o.Args, []string{"--x"}) || o.Workdir != "/srv/project" || o.Model != "opus":
		t.Errorf("options %+v do not carry the profile's settings", o)
	case o.PermissionMode != profile.ModeDefault:
		t.Errorf("permission mode %q without allow_bypass, want %q", o.PermissionMode, profile.ModeDefault)
	case o.Network.Mode != profile.NetworkNone:
		t.Errorf("network %+v, want the spawner's %+v", o.Network, net)
	case !slices.Equal(o.Hide, []string{"/srv/data", "/etc/bridge.yaml"}):
		t.Errorf("hidden %q, want data_dir and the config file", o.Hide)
	case o.Limits.Memory != 1<<30 || o.Limits.Processes != 64:
		t.Errorf("limits %+v, want the profile's resources", o.Limits)
	case o.StdioMCPServers["db"].Command != "dbmcp" || len(o.Binds) != 1 || !o.Binds[0].Writable:
		t.Errorf("MCP servers %+v, binds %+v", o.StdioMCPServers, o.Binds)
	case o.Prepare != nil:
		t.Error("a profile without worktrees got a spawn hook")
	}
	p.AllowBypass = true
	if m := s.ProfileOptions(cfg, p).PermissionMode; m != profile.ModeBypass {
		t.Errorf("permission mode %q with allow_bypass, want %q", m, profile.ModeBypass)
	}

	acp := &profile.Agent{Name: "gemini", Kind: profile.KindACP, PermissionMode: profile.ModeDefault}
	if m := s.ProfileOptions(cfg, acp).PermissionMode; m != "" {
		t.Errorf("an ACP agent asked for mode %q, want none", m)
	}
	s.MCPRelay = "/usr/local/bin/bridge"
	if r := s.ProfileOptions(cfg, acp).MCPRelay; r != s.MCPRelay {
		t.Errorf("an ACP agent's relay of the bridge's tools %q, want the spawner's %q", r, s.MCPRelay)
	}
	if r := s.ProfileOptions(cfg, p).MCPRelay; r != "" {
		t.Errorf("Claude Code got a relay %q (its tools come over stdin)", r)
	}

	hook := &spareHook{}
	s.Worktrees = hook
	p.Worktree = true
	o = s.ProfileOptions(cfg, p)
	if o.Prepare == nil {
		t.Fatal("a worktree profile got no spawn hook")
	}
	if _, err := o.Prepare(context.Background(), o); err != nil || !slices.Equal(hook.spare, []bool{false}) {
		t.Errorf("a conversation's spawn prepared as spare=%v (err %v), want false", hook.spare, err)
	}
}

// TestKeepSpares: every profile the bots use (default and !agent's) keeps
// its spares once, spawned like a conversation of it with the tools and
// worktree hook of a spare, and the returned stop keeps none; a pool
// without spares is left alone.
func TestKeepSpares(t *testing.T) {
	coder := &profile.Agent{Name: "coder", Workdir: "/srv/project", MaxLive: 4, IdleTimeout: time.Minute, WarmSpares: 1, Worktree: true}
	other := &profile.Agent{Name: "other", WarmSparesAuto: true, MaxWarmSpares: 3}
	off := &profile.Agent{Name: "off"}
	cfg := &config.Config{DataDir: "/srv/data", Agents: map[string]*profile.Agent{"coder": coder, "other": other, "off": off},
		Bots: []*config.Bot{{Name: "a", Agent: "coder", Agents: []string{"other", "off"}}, {Name: "b", Agent: "coder"}}}
	hook := &spareHook{}
	s := agents.Spawner{Worktrees: hook}
	var tooled []string
	tools := func(o *agent.Options, bot *config.Bot, p *profile.Agent) {
		tooled = append(tooled, bot.Name+"/"+p.Name)
		o.AllowedTools = append(o.AllowedTools, "mcp__bridge")
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	wp := &warmPool{}
	stop := s.KeepSpares(wp, cfg, []string{"b", "a"}, tools, log)
	if len(wp.kept) != 2 || wp.kept[0].Limit.Profile != "coder" || wp.kept[1].Limit.Profile != "other" {
		t.Fatalf("kept %+v, want coder's then other's spares", wp.kept)
	}
	c := wp.kept[0]
	if c.Count != 1 || c.Limit.MaxLive != 4 || c.Limit.IdleTimeout != time.Minute || !c.WarmUp ||
		c.StateRoot != "/srv/data/sessions" || c.Options.Workdir != "/srv/project" || !slices.Contains(c.Options.AllowedTools, "mcp__bridge") {
		t.Errorf("coder's spares %+v", c)
	}
	if o := wp.kept[1]; !o.Auto || o.Max != 3 {
		t.Errorf("other's spares %+v, want auto with at most 3", o)
	}
	if !slices.Equal(tooled, []string{"a/coder", "a/other", "a/off"}) {
		t.Errorf("tools given to %v, want each profile once", tooled)
	}
	if _, err := c.Options.Prepare(context.Background(), c.Options); err != nil || !slices.Equal(hook.spare, []bool{true}) {
		t.Errorf("a spare's spawn prepared as spare=%v (err %v), want true", hook.spare, err)
	}
	stop()
	if n := len(wp.kept); n != 4 || wp.kept[2].Count != 0 || wp.kept[2].Auto || wp.kept[3].Auto {
		t.Errorf("after stop %+v, want both kept at none", wp.kept[2:])
	}
	agents.StopSpares(wp, "gone")
	if last := wp.kept[len(wp.kept)-1]; last.Limit.Profile != "gone" || last.Count != 0 {
		t.Errorf("StopSpares kept %+v, want none of gone", last)
	}

	agents.Spawner{}.KeepSpares(plainPool{}, cfg, []string{"a"}, tools, log)() // must not panic
}

// TestSpareStatusLine: !status tells how a profile's spares do, and
// nothing for a profile or pool without spares.
func TestSpareStatusLine(t *testing.T) {
	p := &profile.Agent{Name: "coder", WarmSpares: 1}
	wp := &warmPool{}
	for _, tc := range []struct {
		st   pool.SpareStatus
		want string
	}{
		{pool.SpareStatus{Want: 1, Ready: 1}, "\n• warm spares: 1 of 1 ready"},
		{pool.SpareStatus{Want: 3, Ready: 2, Auto: true, Max: 4}, "\n• warm spares (auto, at most 4): 2 of 3 ready"},
		{pool.SpareStatus{Want: 1, MemShort: true}, "\n• warm spares: 0 of 1 ready (no more start: less than the spare memory available)"},
		{pool.SpareStatus{Want: 1, Ready: 1, WarmUpOff: "bedrock"}, "\n• warm spares: 1 of 1 ready (without a warm-up turn: bedrock)"},
		{pool.SpareStatus{Want: 1, Failures: 2, LastError: "exit 1"}, "\n• warm spares: ⚠️ failing to start (2 in a row): exit 1; next try now"},
		{pool.SpareStatus{}, ""},
	} {
		wp.setStatus(tc.st)
		if got := agents.SpareStatusLine(wp, p); got != tc.want {
			t.Errorf("status %+v: %q, want %q", tc.st, got, tc.want)
		}
	}
	wp.setStatus(pool.SpareStatus{Want: 1, Ready: 1})
	if got := agents.SpareStatusLine(wp, &profile.Agent{Name: "off"}); got != "" {
		t.Errorf("a profile without spares: %q", got)
	}
	if got := agents.SpareStatusLine(plainPool{}, p); got != "" {
		t.Errorf("a pool without spares: %q", got)
	}
}

// TestWarmSpares: the operator view lists each profile that keeps spares
// once, sorted, with why it fails when no spare is ready.
func TestWarmSpares(t *testing.T) {
	b := &profile.Agent{Name: "b", WarmSpares: 1}
	a := &profile.Agent{Name: "a", WarmSpares: 2}
	cfg := &config.Config{Agents: map[string]*profile.Agent{"a": a, "b": b, "off": {Name: "off"}},
		Bots: []*config.Bot{{Name: "x", Agent: "b", Agents: []string{"off"}}, nil, {Name: "y", Agent: "a", Agents: []string{"b"}}}}
	wp := &warmPool{}
	wp.setStatus(pool.SpareStatus{Want: 2, Failures: 1, LastError: "boom"})
	got := agents.WarmSpares(wp, cfg)
	if len(got) != 2 || got[0].Profile != "a" || got[1].Profile != "b" || got[0].Target != 2 || got[0].Failing != "boom" {
		t.Errorf("warm spares %+v, want a then b, failing with boom", got)
	}
	if got := agents.WarmSpares(plainPool{}, cfg); got != nil {
		t.Errorf("a pool without spares listed %+v", got)
	}
}
