package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/config/schedules"
)

// Diff is what changed between two valid configs, as key paths such as
// "bots[team].access.users" or "agents.coder.model". It names keys only,
// never values, so it may be logged and audited as it is (secrets stay
// out).
type Diff struct {
	Keys []string // every changed key, sorted
	// Restart are the changed keys a running bridge cannot apply: they
	// need a restart (a reload that changes any of them is refused whole).
	Restart []string
	// BotsAdded and BotsRemoved are bot names; BotsRestarted are bots
	// whose platform or platform settings changed (their adapter is
	// stopped and started again).
	BotsAdded, BotsRemoved, BotsRestarted []string
	// ProfilesRespawn are the agent profiles whose spawn settings changed
	// (see SpawnKeys): their live agents are replaced when idle.
	ProfilesRespawn []string
	// Containment are the agent profiles added or whose sandbox or network
	// changed: the caller builds their sandbox and egress before the
	// reload applies (new agents get them; live ones are replaced when
	// idle, as ProfilesRespawn says).
	Containment []string
}

// Empty reports whether nothing changed.
func (d Diff) Empty() bool { return len(d.Keys) == 0 }

// SpawnKeys are the agent profile keys a live agent process was started
// with: changing one needs a new process (resuming the same session).
// Everything else in a profile (rules, timeouts, agent_schedules, ...) is
// read at each decision and applies at once.
var spawnKeys = []string{"kind", "command", "args", "workdir", "home", "model", "permission_mode", "allow_bypass",
	"allowed_tools", "disallowed_tools", "append_system_prompt", "max_turns", "env", "sandbox_binds", "worktree", "resources",
	"sandbox", "network", "mcp_servers"}

// Compare returns what changed from old to new.
func Compare(old, new *Config) Diff {
	var d Diff
	add := func(key string, restart bool) {
		d.Keys = append(d.Keys, key)
		if restart {
			d.Restart = append(d.Restart, key)
		}
	}
	same := reflect.DeepEqual
	if old.DataDir != new.DataDir {
		add("data_dir", true)
	}
	if old.Log != new.Log {
		add("log", true)
	}
	if old.HTTP != new.HTTP {
		add("http", true)
	}
	if old.Retention != new.Retention {
		add("retention", false)
	}
	if !same(old.Store, new.Store) {
		add("store", true) // the database is opened at start
	}
	if !same(old.Transcription, new.Transcription) {
		add("transcription", true) // the transcriber is made at start
	}
	if old.Replicas != new.Replicas {
		add("replicas", true)
	}
	if old.StatusDelay != new.StatusDelay {
		add("status_delay", false)
	}
	if old.Delivery != new.Delivery {
		add("delivery", false)
	}
	if !same(old.Web.TrustedProxies, new.Web.TrustedProxies) {
		add("web.trusted_proxies", true)
	}
	if !same(old.Web.Users, new.Web.Users) {
		add("web.users", false)
	}
	if !same(old.Handoff.Users, new.Handoff.Users) {
		add("handoff.users", false) // read at each request (bridges/features/handoff)
	}
	if !same(limitKeys(old.Limits), limitKeys(new.Limits)) {
		add("limits", false)
	}
	if !same(scheduleKeys(old.Schedules), scheduleKeys(new.Schedules)) {
		add("schedules", false)
	}
	compareAgents(old, new, &d, add)
	compareBots(old, new, &d, add)
	slices.Sort(d.Keys)
	slices.Sort(d.Restart)
	return d
}

func compareAgents(old, new *Config, d *Diff, add func(string, bool)) {
	for _, name := range unionKeys(old.Agents, new.Agents) {
		a, b := old.Agents[name], new.Agents[name]
		p := "agents." + name
		switch {
		case a == nil:
			// A new profile: the caller builds its sandbox and network. A
			// worktree profile's git runs in the sandbox the worktrees were
			// given at start, which it lacks.
			add(p, b.Worktree && b.Sandbox != profile.SandboxNone)
			d.Containment = append(d.Containment, name)
			continue
		case b == nil:
			add(p, false) // no bot may name it (validated): nothing new uses it
			continue
		}
		respawn, contain := false, false
		for _, f := range agentFields(a, b) {
			switch {
			case f == "sandbox" && (a.Worktree || b.Worktree):
				add(p+"."+f, true) // the worktrees' git keeps the sandbox it was given at start
				respawn, contain = true, true
			case f == "sandbox" || f == "network":
				add(p+"."+f, false)
				respawn, contain = true, true
			case slices.Contains(spawnKeys, f):
				add(p+"."+f, false)
				respawn = true
			default:
				add(p+"."+f, false)
			}
		}
		if respawn {
			d.ProfilesRespawn = append(d.ProfilesRespawn, name)
		}
		if contain {
			d.Containment = append(d.Containment, name)
		}
	}
}

// agentFields names the yaml keys that differ between a and b.
func agentFields(a, b *profile.Agent) []string {
	type kv struct {
		key  string
		x, y any
	}
	all := []kv{
		{"kind", a.Kind, b.Kind}, {"command", a.Command, b.Command}, {"args", a.Args, b.Args}, {"workdir", a.Workdir, b.Workdir},
		{"home", a.Home, b.Home}, {"model", a.Model, b.Model}, {"permission_mode", a.PermissionMode, b.PermissionMode},
		{"allow_bypass", a.AllowBypass, b.AllowBypass}, {"allowed_tools", a.AllowedTools, b.AllowedTools},
		{"disallowed_tools", a.DisallowedTools, b.DisallowedTools},
		{"append_system_prompt", a.AppendSystemPrompt, b.AppendSystemPrompt}, {"max_turns", a.MaxTurns, b.MaxTurns},
		{"idle_timeout", a.IdleTimeout, b.IdleTimeout}, {"approval_timeout", a.ApprovalTimeout, b.ApprovalTimeout},
		{"max_live", a.MaxLive, b.MaxLive}, {"warm_spares", a.WarmSparesText(), b.WarmSparesText()},
		{"max_warm_spares", a.MaxWarmSpares, b.MaxWarmSpares}, {"spare_memory", a.SpareMemory, b.SpareMemory}, {"env", a.Env, b.Env},
		{"rules", a.Rules, b.Rules}, {"sandbox", a.Sandbox, b.Sandbox}, {"sandbox_binds", a.SandboxBinds, b.SandboxBinds},
		{"worktree", a.Worktree, b.Worktree}, {"resources", a.Resources, b.Resources}, {"network", a.Network, b.Network},
		{"agent_schedules", a.AgentSchedules, b.AgentSchedules}, {"mcp_servers", a.MCPServers, b.MCPServers},
	}
	var out []string
	for _, f := range all {
		if !reflect.DeepEqual(f.x, f.y) {
			out = append(out, f.key)
		}
	}
	return out
}

func compareBots(old, new *Config, d *Diff, add func(string, bool)) {
	for _, b := range old.Bots {
		if new.Bot(b.Name) == nil {
			d.BotsRemoved = append(d.BotsRemoved, b.Name)
			add(fmt.Sprintf("bots[%s]", b.Name), false) // stops after its conversations' current turns
		}
	}
	for _, nb := range new.Bots {
		ob := old.Bot(nb.Name)
		p := fmt.Sprintf("bots[%s]", nb.Name)
		if ob == nil {
			d.BotsAdded = append(d.BotsAdded, nb.Name)
			add(p, false) // a web bot needs the web console made at start: the caller checks
			continue
		}
		if ob.Platform != nb.Platform || !reflect.DeepEqual(ob.Settings, nb.Settings) {
			web := ob.Platform == PlatformWeb || nb.Platform == PlatformWeb
			if ob.Platform != nb.Platform {
				add(p+".platform", web)
			} else {
				add(p+"."+nb.Platform, web)
			}
			if !web {
				d.BotsRestarted = append(d.BotsRestarted, nb.Name)
			}
		}
		if ob.Agent != nb.Agent {
			add(p+".agent", false) // new conversations; live ones keep their profile
		}
		if !slices.Equal(ob.Agents, nb.Agents) {
			add(p+".agents", false) // a conversation on a profile no longer listed goes back to the default
		}
		if ob.Verbosity != nb.Verbosity {
			add(p+".verbosity", false)
		}
		for _, f := range accessFields(ob.Access, nb.Access) {
			add(p+".access."+f, false)
		}
	}
}

func accessFields(a, b Access) []string {
	var out []string
	for _, f := range []struct {
		key  string
		x, y []string
	}{{"channels", a.Channels, b.Channels}, {"users", a.Users, b.Users}, {"approvers", a.Approvers, b.Approvers}, {"admins", a.Admins, b.Admins}} {
		if !slices.Equal(f.x, f.y) {
			out = append(out, f.key)
		}
	}
	return out
}

// limitKeys and scheduleKeys are what the config says, without the loaded
// time zones (pointers that differ between two loads of one file).
func limitKeys(ls []Limit) []Limit {
	out := make([]Limit, len(ls))
	for i, l := range ls {
		l.Location = nil
		out[i] = l
	}
	return out
}

func scheduleKeys(ss []*schedules.Schedule) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q %q %q %q %q %q %q %q %v %v", s.Name, s.Bot, s.Channel, s.Thread, s.Cron.Expr, s.Cron.Zone,
			s.Prompt, s.Agent, s.NewThread, s.CatchUp)
	}
	return out
}

func unionKeys[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
