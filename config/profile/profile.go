// Package profile is the agent profiles of the config (yaml
// agents.NAME): the CLI command and its flags, permissions and rules,
// timeouts and the live cap, warm spares, the sandbox with its binds,
// resources and network, and the profile's MCP servers. It decodes a
// profile with package decode and checks it, with the same messages and
// lines as the rest of the file; package config composes it
// (Config.Agents), and importers name this package for its types.
package profile

import (
	"runtime"
	"time"

	"github.com/agentbridge/agentbridge/config/policy"
)

// Defaults applied when a key of a profile is absent (or, for string keys,
// empty).
const (
	DefaultCommand         = "claude"
	DefaultWorkdir         = "./workspace"
	DefaultPermissionMode  = "default"
	DefaultIdleTimeout     = 30 * time.Minute
	DefaultApprovalTimeout = 10 * time.Minute
	DefaultMaxLive         = 8
	DefaultWarmSpares      = 1

	// Sandboxes accepted in agents.*.sandbox (see DefaultSandbox).
	SandboxBwrap = "bwrap"
	SandboxNone  = "none"

	// Kinds of agent accepted in agents.*.kind (see Agent.Kind).
	KindClaude = "claude"
	KindACP    = "acp"
)

// Permission modes accepted in agents.*.permission_mode.
const (
	ModeDefault     = "default"
	ModeAcceptEdits = "acceptEdits"
	ModePlan        = "plan"
	ModeBypass      = "bypassPermissions"
)

// Agent is a named agent profile (yaml agents.NAME): a Claude Code CLI
// (kind claude) or any agent speaking the Agent Client Protocol (kind acp).
type Agent struct {
	Name string // the map key under agents
	// Kind (yaml kind: claude|acp, default claude) is the protocol the
	// agent speaks: the Claude Code CLI's stream-json, or the Agent Client
	// Protocol (then Command is required, Args is the agent's whole
	// command line after it, and the Claude-only keys are refused: see
	// ClaudeOnlyKeys).
	Kind               string
	Command            string        // yaml command, default "claude" (kind claude); required for kind acp
	Args               []string      // yaml args: extra CLI flags, appended (kind acp: the agent's arguments)
	Workdir            string        // yaml workdir, default "./workspace"; resolved, created by the agent package if missing
	Home               string        // yaml home: HOME for the agent; empty = the bridge's HOME
	Model              string        // yaml model; empty = the CLI's default
	PermissionMode     string        // yaml permission_mode: default|acceptEdits|plan|bypassPermissions
	AllowBypass        bool          // yaml allow_bypass: required for bypassPermissions
	AllowedTools       []string      // yaml allowed_tools, passed to --allowed-tools
	DisallowedTools    []string      // yaml disallowed_tools
	AppendSystemPrompt string        // yaml append_system_prompt
	MaxTurns           int           // yaml max_turns; 0 = unlimited, never negative
	IdleTimeout        time.Duration // yaml idle_timeout, default 30m; 0 = never stop an idle process
	ApprovalTimeout    time.Duration // yaml approval_timeout, default 10m; 0 = wait forever
	MaxLive            int           // yaml max_live, default 8; at least 1
	WarmSpares         int           // yaml warm_spares, default 1: CLIs kept started and initialized for new conversations; 0 = off; at most MaxLive (they count against it and give way first)
	// WarmSparesAuto (yaml warm_spares: auto; WarmSpares is then 0): the
	// number of spares follows the recent arrival rate of new
	// conversations, at least 1 and at most MaxWarmSpares and MaxLive, and
	// a spare starts only while SpareMemory is available.
	WarmSparesAuto bool
	MaxWarmSpares  int                  // yaml max_warm_spares, default 4; only with warm_spares: auto
	SpareMemory    int64                // yaml spare_memory, default 256MiB: memory one spare may use; 0 = no check; only with warm_spares: auto
	Env            map[string]string    // yaml env: extra environment for the agent; values are secrets
	Rules          []policy.Rule        // yaml rules: permission policy, first match wins (decided by package policy)
	Sandbox        string               // yaml sandbox: bwrap|none, default DefaultSandbox()
	SandboxBinds   []SandboxBind        // yaml sandbox_binds: extra paths the sandboxed agent sees
	MCPServers     map[string]MCPServer // yaml mcp_servers: stdio MCP servers the agent's CLI starts (see mcpservers.go)
	// Worktree (yaml worktree, default false): when Workdir is in a git
	// repository, each agent session works in its own git worktree on a
	// branch agentbridge/<short session id> made from the current HEAD.
	Worktree bool
	// Resources (yaml resources) bound each agent process and what it
	// starts: memory, processes, CPU share (see Resources).
	Resources Resources
	// Network (yaml network) says where the agent may connect (see Network).
	Network Network
	// AgentSchedules (yaml agent_schedules: ask|allow|off, default ask) is
	// what a schedule the agent itself asks for needs.
	AgentSchedules string
}

// SandboxBind is an extra path a sandboxed agent may see, at the same place
// as outside (yaml agents.*.sandbox_binds[]).
type SandboxBind struct {
	Path     string // yaml path: resolved against the config file's directory, absolute
	Writable bool   // yaml mode: "rw" = true, "ro" (default) = false
}

// DefaultSandbox is agents.*.sandbox when the YAML omits it: bwrap on Linux,
// none elsewhere (the bridge warns at start).
func DefaultSandbox() string {
	if runtime.GOOS == "linux" {
		return SandboxBwrap
	}
	return SandboxNone
}
