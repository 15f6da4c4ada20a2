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
// The strict YAML walker is package config/decode; the agent profiles
// (agents.NAME) are package config/profile and the schedules package
// config/schedules (importers name those packages for their types); the
// Bash rule
// engine is config/policy.
//
// Config values are plain data: the package keeps no state and never logs.
// Secret values (agent env values, web tokens) are redacted by the String,
// GoString and LogValue methods of the types that hold them; platform
// settings redact their own tokens (see Settings).
package config

import (
	"path/filepath"
	"slices"
	"time"

	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/config/schedules"
)

// Defaults applied by Load and Parse when a key is absent (or, for string
// keys, empty). Those of agent profiles are in package config/profile.
const (
	DefaultDataDir    = "./data"
	DefaultLogLevel   = "info"
	DefaultLogFormat  = "text"
	DefaultHTTPListen = "127.0.0.1:9464"
	DefaultVerbosity  = "compact"

	// DBFile is the bridge database's file name inside data_dir.
	DBFile = "bridge.db"
)

// Verbosity levels accepted in bots[].verbosity.
const (
	VerbosityQuiet   = "quiet"
	VerbosityCompact = "compact"
	VerbosityFull    = "full"
)

// Config is the whole bridge configuration (YAML top level).
type Config struct {
	Path    string                    // the config file, absolute (set by Load; "" after Parse): the sandbox hides it
	DataDir string                    // yaml data_dir, default "./data"; resolved against the config file's directory
	Log     Log                       // yaml log
	HTTP    HTTP                      // yaml http
	Agents  map[string]*profile.Agent // yaml agents, keyed by profile name (== Agent.Name)
	Bots    []*Bot                    // yaml bots, in file order; at least one
	Web     Web                       // yaml web: web console users (see web.go)
	// Retention is how long finished rows are kept in the database (yaml
	// retention: "90d", "36h", "1d12h"; default 90 days, at least a day; 0 =
	// keep everything). See store.Store.Prune for what is pruned.
	Retention time.Duration
	Limits    []Limit               // yaml limits: spend limits, at most one per bot (see limits.go)
	Schedules []*schedules.Schedule // yaml schedules: prompts run on a cron schedule
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
	// Handoff is who may continue conversations from a terminal (yaml
	// handoff, see handoff.go); zero = nobody.
	Handoff Handoff
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

// Bot is one chat bot (yaml bots[]).
type Bot struct {
	Name     string // yaml name: unique, non-empty
	Platform string // yaml platform: the Name of one of the platforms given to Load or Parse
	Agent    string // yaml agent: a key of Config.Agents
	// Agents are the other profiles the bot's people may move a
	// conversation to with !agent NAME (yaml agents: keys of
	// Config.Agents); Agent stays the default. Empty: no switching.
	Agents    []string
	Verbosity string // yaml verbosity: quiet|compact|full, default compact (tool-progress detail)
	// Settings are the bot's platform settings (yaml bots[].<platform>) as
	// its adapter read them (see Platform.Settings); nil for a platform
	// without settings (web).
	Settings Settings
	Access   Access // yaml access
}

// Profiles are the names of the profiles the bot's conversations may run
// on: Agent (the default) first, then Agents, each once.
func (b *Bot) Profiles() []string {
	out := []string{b.Agent}
	for _, n := range b.Agents {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Access lists who may use a bot (yaml bots[].access). Entries are
// platform ids (channel / chat ids, user ids or phone numbers).
type Access struct {
	Channels  []string // allowed channels / chats; empty = any the bot is in
	Users     []string // who may talk; empty = anyone in allowed channels
	Approvers []string // may approve any permission request (the requester always may)
	Admins    []string // may run admin commands and approve
}

// IsAdmin reports whether user is one of the access admins.
func (a Access) IsAdmin(user string) bool { return slices.Contains(a.Admins, user) }

// HasAdmins reports whether any admin is configured.
func (a Access) HasAdmins() bool { return len(a.Admins) > 0 }

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
