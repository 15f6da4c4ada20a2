// Package reload applies a config reload to the running core: bots added
// start, bots removed stop once their conversations' turns have finished,
// bots whose platform settings changed restart, warm spares and the
// config's schedules follow the new config, and every live conversation
// takes the new config's bot and profile. A conversation whose profile's
// spawn settings changed replaces its agent process at its next idle
// moment (never mid-turn), resuming the same session; a background task
// delays that, telling the thread, unless the reload is forced (bridge
// reload -now). See Replacement.
//
// The package acts on the core through two narrow faces the core
// implements: Host (the core as a whole) and Conv (one conversation, on
// its worker). It never imports the core.
package reload

import (
	"context"
	"log/slog"
	"time"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config"
)

// Reload is one applied reload (see Apply).
type Reload struct {
	Diff config.Diff
	// Started are the adapters of the bots added or restarted
	// (Diff.BotsAdded and Diff.BotsRestarted), opened by the caller.
	Started map[string]bridges.Platform
	// Stopped, when set, is called once the adapter of a bot removed or
	// restarted has stopped (the caller releases what it holds).
	Stopped func(bot string, p bridges.Platform)
	// Force replaces changed profiles' agents at their next moment
	// without a turn even when a background task runs (which ends).
	Force bool
	// Containment, when set, is how each profile's agents are confined
	// from now on (its sandbox and network), built by the caller for the
	// new config: new agents get it, and the profiles whose containment
	// changed are in Diff.ProfilesRespawn.
	Containment *Containment
}

// Containment is how the agents of each profile are confined, by profile
// name: the sandbox and the network (see agent/sandbox, agent.Network).
type Containment struct {
	Sandboxes map[string]sandbox.Sandbox
	Networks  map[string]agent.Network
}

// Host is the core as a reload sees it. Its methods are safe for
// concurrent use.
type Host interface {
	Log() *slog.Logger
	Now() time.Time
	// Config is the config in force (the new one, during Apply).
	Config() *config.Config
	// Swap makes the core run the bots it runs minus removed plus
	// started, and returns what it ran before; it fails with
	// bridges.ErrNotRunning when the core is not running.
	Swap(removed []string, started map[string]bridges.Platform) (Swapped, error)
	// RunPlatform runs bot name's adapter with the core as its handler
	// until ctx ends.
	RunPlatform(ctx context.Context, name string, p bridges.Platform) error
	// KeepSpares keeps the warm spares of the profiles the bots of
	// platforms use, with the profiles' current settings, and returns a
	// function that stops keeping them; DropSpares stops keeping the
	// spares of profile (its bots are gone).
	KeepSpares(platforms map[string]bridges.Platform) (stop func())
	DropSpares(profile string)
	// SetContainment makes c how agents spawned from now on are confined.
	SetContainment(c Containment)
	// SyncSchedules stores the config's schedules and wakes the scheduler
	// (nothing without one).
	SyncSchedules(ctx context.Context) error
}

// Swapped is what the core ran before a Swap.
type Swapped struct {
	Old  map[string]bridges.Platform // the bots' adapters before, by name
	Next map[string]bridges.Platform // and after
	// RunCtx is the core's run context: what reloads start ends with it.
	RunCtx context.Context
	// Workers are the live conversations' workers.
	Workers []Worker
}

// Worker is one live conversation's worker.
type Worker interface {
	Bot() string
	// Do runs f on the worker, after the input queued before it; it
	// waits for room in the queue and reports false when the worker has
	// stopped (or ctx ended) and f will not run.
	Do(ctx context.Context, f func(ctx context.Context, c Conv)) bool
}

// Conv is one conversation as a reload sees it; its methods run on the
// conversation's worker only.
type Conv interface {
	Log() *slog.Logger
	Now() time.Time
	// Profile is the name of the conversation's agent profile.
	Profile() string
	// Refresh takes cfg's entry of the conversation's bot and profile
	// (rules, access lists, timeouts apply from the next decision) and the
	// bot's current adapter. A bot or profile cfg lacks keeps its last.
	Refresh(cfg *config.Config)
	// Spawned reports whether the conversation has an agent process or is
	// starting one; Live whether it has one.
	Spawned() bool
	Live() bool
	// InTurn reports whether the agent is in a turn: a turn running, a
	// message in flight, an open card, or starting.
	InTurn() bool
	// AgentBusy reports whether the live agent runs a turn it started
	// itself (on a background task's result).
	AgentBusy() bool
	// Notice posts text into the conversation.
	Notice(ctx context.Context, text string)
	// Restart stops the idle agent process: the next message spawns one
	// with the profile's settings, resuming the same session.
	Restart(ctx context.Context)
	// Stop stops the agent process for good, closing its open cards
	// with expired as their status (a removed bot).
	Stop(ctx context.Context, expired string)
	// Recheck runs Replacement.Check again after d.
	Recheck(d time.Duration)
	// Replacement is the conversation's replacement state.
	Replacement() *Replacement
}
