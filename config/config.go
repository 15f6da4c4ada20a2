// Package config holds agentbridge's typed configuration: a strict YAML
// loader with ${ENV} expansion, defaults, validation that reports every
// problem at once with its line number, and an embedded commented example.
//
// A Config returned by Load or Parse is complete and valid: defaults are
// filled in, durations parsed, and relative paths resolved. Paths are
// resolved like this:
//
//   - data_dir, agents.*.workdir, agents.*.home and a relative
//     agents.*.command that contains a path separator (e.g. ./bin/claude)
//     are relative to the directory of the config file;
//   - paths in a bot's platform settings are the adapter's to resolve
//     (Section.DataPath resolves against data_dir).
//
// A bare command such as "claude" is left alone and looked up in PATH when
// the agent starts.
//
// Each bot's platform settings (bots[].<platform>) are read by the
// platform's adapter: Load and Parse take the list of platforms (see
// Platform) and hand each adapter its bots' settings mappings, with line
// numbers, through a Section.
//
// Config values are plain data: the package keeps no state and never logs.
// Secret values (agent env values, web tokens) are redacted by the String,
// GoString and LogValue methods of the types that hold them; platform
// settings redact their own tokens (see Settings).
package config

import (
	"path/filepath"
	"runtime"
	"time"

	"github.com/agentbridge/agentbridge/config/policy"
)

// Defaults applied by Load and Parse when a key is absent (or, for string
// keys, empty).
const (
	DefaultDataDir         = "./data"
	DefaultLogLevel        = "info"
	DefaultLogFormat       = "text"
	DefaultHTTPListen      = "127.0.0.1:9464"
	DefaultCommand         = "claude"
	DefaultWorkdir         = "./workspace"
	DefaultPermissionMode  = "default"
	DefaultIdleTimeout     = 30 * time.Minute
	DefaultApprovalTimeout = 10 * time.Minute
	DefaultMaxLive         = 8
	DefaultWarmSpares      = 1
	DefaultVerbosity       = "compact"

	// Sandboxes accepted in agents.*.sandbox (see DefaultSandbox).
	SandboxBwrap = "bwrap"
	SandboxNone  = "none"

	// DBFile is the bridge database's file name inside data_dir.
	DBFile = "bridge.db"
)

// Permission modes accepted in agents.*.permission_mode.
const (
	ModeDefault     = "default"
	ModeAcceptEdits = "acceptEdits"
	ModePlan        = "plan"
	ModeBypass      = "bypassPermissions"
)

// Verbosity levels accepted in bots[].verbosity.
const (
	VerbosityQuiet   = "quiet"
	VerbosityCompact = "compact"
	VerbosityFull    = "full"
)

// Config is the whole bridge configuration (YAML top level).
type Config struct {
	Path    string            // the config file, absolute (set by Load; "" after Parse): the sandbox hides it
	DataDir string            // yaml data_dir, default "./data"; resolved against the config file's directory
	Log     Log               // yaml log
	HTTP    HTTP              // yaml http
	Agents  map[string]*Agent // yaml agents, keyed by profile name (== Agent.Name)
	Bots    []*Bot            // yaml bots, in file order; at least one
	Web     Web               // yaml web: web console users (see web.go)
	// Retention is how long finished rows are kept in the database (yaml
	// retention: "90d", "36h", "1d12h"; default 90 days, at least a day; 0 =
	// keep everything). See store.Prune for what is pruned.
	Retention time.Duration
	Limits    []Limit     // yaml limits: spend limits, at most one per bot (see limits.go)
	Schedules []*Schedule // yaml schedules: prompts run on a cron schedule (see Schedule)
	// StatusDelay is how long a turn runs before the platform's working
	// indicator is shown (yaml status_delay; default 1s, 0 = at once, at
	// most 10m): quicker turns cost only their reply.
	StatusDelay time.Duration
	Delivery    Delivery // yaml delivery: how long replies wait out an outage (see delivery.go)
	Store       Store    // yaml store: SQLite in data_dir (default) or PostgreSQL (see store.go)
	Replicas    Replicas // yaml replicas: several processes on one PostgreSQL (see replicas.go)
	// Transcription is the speech-to-text endpoint for voice notes (yaml
	// transcription, see transcription.go); zero = voice notes off.
	Transcription Transcription
}

// Log configures the bridge's own logging (yaml log).
type Log struct {
	Level  string // debug|info|warn|error, default info
	Format string // text|json, default text
}

// HTTP configures the health and metrics listener (yaml http).
type HTTP struct {
	// Listen is the host:port for /healthz and /metrics. Default
	// "127.0.0.1:9464" when the key is absent or null; an explicit empty
	// string ("") disables the listener.
	Listen string
}

// Agent is a named Claude Code CLI profile (yaml agents.NAME).
type Agent struct {
	Name               string        // the map key under agents
	Command            string        // yaml command, default "claude"
	Args               []string      // yaml args: extra CLI flags, appended
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

// Bot is one chat bot (yaml bots[]).
type Bot struct {
	Name      string // yaml name: unique, non-empty
	Platform  string // yaml platform: the Name of one of the platforms given to Load or Parse
	Agent     string // yaml agent: a key of Config.Agents
	Verbosity string // yaml verbosity: quiet|compact|full, default compact (tool-progress detail)
	// Settings are the bot's platform settings (yaml bots[].<platform>) as
	// its adapter read them (see Platform.Settings); nil for a platform
	// without settings (web).
	Settings Settings
	Access   Access // yaml access
}

// Access lists who may use a bot (yaml bots[].access). Entries are
// platform ids (channel / chat ids, user ids or phone numbers).
type Access struct {
	Channels  []string // allowed channels / chats; empty = any the bot is in
	Users     []string // who may talk; empty = anyone in allowed channels
	Approvers []string // may approve any permission request (the requester always may)
	Admins    []string // may run admin commands and approve
}

// DBPath is the bridge's SQLite database file: data_dir/bridge.db (the
// database unless store.driver is postgres).
func (c *Config) DBPath() string {
	return filepath.Join(c.DataDir, DBFile)
}

// Bot returns the bot named name, or nil if there is none.
func (c *Config) Bot(name string) *Bot {
	for _, b := range c.Bots {
		if b.Name == name {
			return b
		}
	}
	return nil
}
