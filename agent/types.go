package agent

import (
	"context"
	"time"

	"github.com/agentbridge/agentbridge/agent/sandbox"
)

// Options describe how to spawn one CLI process.
//
// The process gets a minimal environment: PATH (the bridge's), HOME (Home,
// or the bridge's), LANG (the bridge's, or C.UTF-8), TMPDIR (a fresh
// directory the session creates and removes after the exit), then Env on
// top (Env may override any of them). Nothing else of the bridge's
// environment reaches the agent. An Env entry with an empty value removes
// the variable.
//
// With Home set, the sandbox shows it read-write (shared by the profile's
// sessions); with Home empty the agent's HOME is the bridge's, and the
// sandbox replaces it with an empty private directory. The workdir's
// .claude directory (project settings) is created if missing and is
// read-only inside the sandbox: permission rules are the bridge's.
//
// PermissionMode "bypassPermissions" is passed as --permission-mode
// bypassPermissions, which is all the CLI needs (and lets set_permission_mode
// switch back to it later); run as root, the CLI also requires
// IS_SANDBOX=1 in Env and Start refuses without it.
type Options struct {
	// Kind is the protocol the process speaks: KindClaude ("" too), the
	// Claude Code CLI's stream-json, or KindACP, the Agent Client Protocol
	// (agent/acp; see driver.go). Everything but the protocol — the
	// environment, sandbox, network, cgroup, limits, stop and exit — is
	// the same for both. For KindACP, Command is required and Args is the
	// whole argument list; Model and PermissionMode, when set, are one of
	// the models and modes the agent offers, asked for before the first
	// prompt (agent/acp/choices.go); MCPServers reach it through
	// MCPRelay and StdioMCPServers are offered to it in session/new (it
	// starts them); the Claude-only options (AllowedTools,
	// DisallowedTools, AppendSystemPrompt, MaxTurns) are not passed to
	// the agent.
	Kind               string
	Command            string   // executable, default "claude"
	Args               []string // extra flags, appended last
	Workdir            string   // cwd of the agent (created if missing)
	Home               string   // HOME for the agent; "" = the bridge's HOME
	Model              string
	PermissionMode     string // default|acceptEdits|plan|bypassPermissions
	AllowedTools       []string
	DisallowedTools    []string
	AppendSystemPrompt string
	MaxTurns           int
	Env                map[string]string // extra environment; nothing else leaks in

	// Sandbox confines the process; nil runs it unconfined (sandbox.None).
	// Whatever the sandbox, the process gets its own process group and,
	// on Linux, SIGKILL when the bridge dies.
	Sandbox sandbox.Sandbox
	// StateDir is the session's private state directory (created 0700 if
	// missing). The CLI keeps its config dir there (CLAUDE_CONFIG_DIR =
	// StateDir/claude: transcripts, todos, shell snapshots, settings it
	// writes), so sessions sharing a HOME do not see each other's state.
	// Resume needs the same StateDir. "" = the CLI's default, HOME/.claude.
	// For KindACP, the agent's HOME is StateDir/home unless Home is set,
	// and the bridge keeps the agent's session id in StateDir/acp, which
	// the sandbox shows read-only.
	StateDir string
	// Binds are extra paths the sandbox shows (the profile's sandbox_binds).
	Binds []sandbox.Bind
	// Hide are paths the sandbox never shows: the bridge's data_dir and
	// config file. StateDir is visible even when it lies inside one.
	Hide []string
	// TempRoot is the directory the process's private TMPDIR is made in
	// (removed after the exit; not made when Env sets TMPDIR): a bridge
	// gives its agents one root it removes even after it was killed
	// (internal/tmproot). "" = os.TempDir().
	TempRoot string
	// Network is how the process reaches the network (see network.go);
	// the zero value shares the host's.
	Network Network
	// Cgroups, when set, start the process (sandbox and all) in a cgroup
	// of its own with Limits (see sandbox.Cgroups); the session reports
	// hits (LimitHit, Exit.Limit) and removes the cgroup after the exit.
	// Start fails when the cgroup cannot be made. Nil or limits Cgroups
	// cannot enforce: none (the bridge warns at start).
	Cgroups *sandbox.Cgroups
	Limits  sandbox.Limits
	// StartCPU, when above 0 and Limits has a CPU share, is the share the
	// process starts with instead, until Session.UseFullCPU: a warm spare
	// boots on what CPU the conversations leave over.
	StartCPU float64

	// SessionID is the Claude session id. With Resume false the CLI is
	// started with --session-id SessionID (a new conversation), with Resume
	// true with --resume SessionID.
	SessionID string
	Resume    bool
	// ResumeStamp names the session files a resume starts from (opaque;
	// with replicas, the stored files another replica may have written:
	// ownership.Ownership.RestoreSession). Nothing of it reaches the CLI:
	// the pool hands a conversation's warm resume only to an Acquire with
	// the same stamp, so an agent started from older files is not reused.
	ResumeStamp string

	// MCPServers are the host's in-process MCP servers by name, offered to
	// the CLI as SDK servers (--mcp-config type "sdk" and initialize's
	// sdkMcpServers): their tools appear as mcp__NAME__TOOL. The session
	// sends initialize at spawn when there is any. An agent of kind acp
	// gets them through MCPRelay.
	MCPServers map[string]MCPServer
	// StdioMCPServers are MCP servers the CLI starts itself, by name
	// (--mcp-config type "stdio"), inside the agent's sandbox: the
	// profile's mcp_servers. Their elicitation requests arrive as
	// streamjson.Elicitation events.
	StdioMCPServers map[string]StdioMCPServer
	MCPTimeout      time.Duration // bounds one MCP message, default DefaultMCPTimeout
	// MCPRelay is the absolute path of a binary importing agent/mcprelay
	// (the bridge: os.Executable), which an agent of kind acp starts as
	// the stdio MCP server of each of MCPServers, shown read-only in the
	// sandbox (acp_tools.go). Empty, or without StateDir, an ACP agent
	// gets no MCPServers.
	MCPRelay string

	// Prepare, when set, runs first in Start, with the session's final id
	// (a warm spare's own), and returns the options to spawn with: the
	// spawn hook of the bridge's worktrees points Workdir and Binds at the
	// session's git worktree there. An error fails the start. Prepare is
	// not part of a spawn's shape (a spare and a new conversation whose
	// options differ only in Prepare match), so it must depend on nothing
	// but the profile and the options it is given. It may block (git).
	Prepare func(ctx context.Context, opts Options) (Options, error)

	MaxLineBytes   int           // stdout line cap, default 64 MiB
	ControlTimeout time.Duration // wait for control_response, default 10s
	CloseGrace     time.Duration // Close: wait this long for a graceful exit before killing, default 10s
}
