package agents

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/bridges/core/sessiondir"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// Containment is how the agents of each profile are confined, by profile
// name: the sandbox and the network (see agent/sandbox, agent.Network).
// A reload may replace it while the bridge runs.
type Containment struct {
	Sandboxes map[string]sandbox.Sandbox
	Networks  map[string]agent.Network
}

// Spawner is how each profile's agents are spawned, apart from the
// profile's own settings: their containment, the cgroups that enforce
// their resources and the worktree hook. The zero Spawner confines
// nothing, enforces no limits and gives no worktrees.
type Spawner struct {
	// Containment confines each profile's processes (the bridge refuses
	// to start when a sandboxed profile has no sandbox or network here:
	// agents are never silently unconfined).
	Containment
	// Cgroups, when set, enforce each profile's resources in a cgroup
	// per agent process (see sandbox.Cgroups); nil enforces none.
	Cgroups *sandbox.Cgroups
	// Worktrees, when set, gives the sessions of profiles with worktree:
	// true a git worktree each (bridges/features/worktree.New), as a
	// spawn hook; nil: every agent works in its profile's workdir.
	Worktrees Worktrees
	// MCPRelay is the bridge's own binary (os.Executable), which agents of
	// kind acp start to reach the bridge's tools (agent.Options.MCPRelay);
	// "" gives them none.
	MCPRelay string
	// TempRoot is where agents make their private TMPDIRs
	// (agent.Options.TempRoot); "" = os.TempDir().
	TempRoot string
}

// CheckContainment reports the first profile of cfg whose agents s
// cannot confine as it says: a sandbox other than "none" that s lacks,
// or a bwrap profile's network mode (proxy or none) without its network
// setup. Agents are never silently unconfined, never silently share the
// host's network.
func (s Spawner) CheckContainment(cfg *config.Config) error {
	for name, a := range cfg.Agents {
		if a.Sandbox != "" && a.Sandbox != profile.SandboxNone && s.Sandboxes[name] == nil {
			return fmt.Errorf("agent profile %q: no %s sandbox was provided", name, a.Sandbox)
		}
		if m := a.Network.Mode; a.Sandbox == profile.SandboxBwrap && (m == profile.NetworkProxy || m == profile.NetworkNone) &&
			s.Networks[name].Mode != m {
			return fmt.Errorf("agent profile %q: no network setup for network mode %s was provided", name, m)
		}
	}
	return nil
}

// ProfileOptions are the spawn options every conversation of profile p
// starts from under config cfg: everything but the session (id, resume,
// state directory) and the conversation's own overrides. The bridge's
// own files (SecretPaths) are hidden, the profile's sandbox, network,
// binds, resources, MCP servers and worktree hook applied.
func (s Spawner) ProfileOptions(cfg *config.Config, p *profile.Agent) agent.Options {
	opts := agent.Options{
		Kind:               p.Kind,
		Command:            p.Command,
		Args:               append([]string(nil), p.Args...),
		Workdir:            p.Workdir,
		Home:               p.Home,
		Model:              p.Model,
		PermissionMode:     PermissionMode(p),
		AllowedTools:       append([]string(nil), p.AllowedTools...),
		DisallowedTools:    append([]string(nil), p.DisallowedTools...),
		AppendSystemPrompt: p.AppendSystemPrompt,
		MaxTurns:           p.MaxTurns,
		Env:                maps.Clone(p.Env),
		Sandbox:            s.Sandboxes[p.Name],
		Network:            s.Networks[p.Name],
		Hide:               SecretPaths(cfg),
		Cgroups:            s.Cgroups,
		Limits:             sandboxLimits(p.Resources),
		TempRoot:           s.TempRoot,
	}
	if p.Kind == profile.KindACP {
		opts.MCPRelay = s.MCPRelay
	}
	if p.Kind == profile.KindACP {
		// An ACP agent offers its own modes: none is asked for unless the
		// conversation chose one (StoredMode), so that its conversations
		// and its warm spares spawn alike.
		opts.PermissionMode = ""
	}
	if wt := s.Worktrees; wt != nil && p.Worktree {
		opts.Prepare = func(ctx context.Context, o agent.Options) (agent.Options, error) {
			return wt.PrepareSpawn(ctx, p, o, false)
		}
	}
	for name, s := range p.MCPServers {
		if opts.StdioMCPServers == nil {
			opts.StdioMCPServers = map[string]agent.StdioMCPServer{}
		}
		opts.StdioMCPServers[name] = agent.StdioMCPServer{Command: s.Command, Args: slices.Clone(s.Args), Env: maps.Clone(s.Env)}
	}
	for _, b := range p.SandboxBinds {
		opts.Binds = append(opts.Binds, sandbox.Bind{Path: b.Path, Writable: b.Writable})
	}
	return opts
}

// PermissionMode is the profile's permission mode; a bypassPermissions
// the profile does not allow (which check-config refuses) falls back to
// default.
func PermissionMode(p *profile.Agent) string {
	m := textcut.OrBlank(p.PermissionMode, profile.ModeDefault)
	if m == profile.ModeBypass && !p.AllowBypass {
		return profile.ModeDefault
	}
	return m
}

// ConvOptions are the spawn options of the agent of conversation row on
// profile p: base (ProfileOptions) with its session, resumed when resume
// is set, its private CLI state under dataDir ("" keeps none), and row's
// model and mode overrides (EffectiveMode; an ACP agent gets its own
// stored mode, StoredMode). Built at every spawn and resume, so a stored
// bypassPermissions override applies only while p has allow_bypass.
func ConvOptions(base agent.Options, p *profile.Agent, row store.Conversation, resume bool, dataDir string) agent.Options {
	opts := base
	opts.SessionID = row.SessionID
	opts.Resume = resume
	if dataDir != "" {
		// The session's private CLI state lives with the bridge's data, which
		// the sandbox hides — except this directory.
		opts.StateDir = filepath.Join(dataDir, sessiondir.Dir, row.SessionID)
	}
	if row.Model != "" {
		opts.Model = row.Model
	}
	opts.PermissionMode = EffectiveMode(p, row)
	if p.Kind == profile.KindACP { // the agent's own modes (commands.go)
		opts.PermissionMode = StoredMode(row.PermissionMode)
	}
	return opts
}

// EffectiveModel is the model the agent of conversation row on profile p
// runs: row's override, else the profile's ("" = the CLI's default).
func EffectiveModel(p *profile.Agent, row store.Conversation) string {
	if row.Model != "" {
		return row.Model
	}
	return p.Model
}

// EffectiveMode is the permission mode the agent of conversation row on
// profile p runs in: row's override, else the profile's (PermissionMode).
// bypassPermissions, from either, counts only while p has allow_bypass
// (checked at every spawn, so a stored "!mode bypassPermissions" stops
// applying once it is turned off).
func EffectiveMode(p *profile.Agent, row store.Conversation) string {
	if m := row.PermissionMode; m != "" && (m != profile.ModeBypass || p.AllowBypass) {
		return m
	}
	return PermissionMode(p)
}
