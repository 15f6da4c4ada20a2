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
// The package sits above the core: a Reloader is registered as one of the
// core's conversation features (core.CoreOptions.ConvFeatures), which
// gives each conversation's worker its Replacement, and Apply acts on the
// core through Host, which *core.Core implements. The core never imports
// this package.
package reload

import (
	"context"
	"log/slog"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
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
	Containment *agents.Containment
}

// Host is the core as a reload sees it (*core.Core implements it). Its
// methods are safe for concurrent use.
type Host interface {
	Log() *slog.Logger
	Now() time.Time
	// Config is the config in force (the new one, during Apply).
	Config() *config.Config
	// Swap makes the core run the bots it runs minus removed plus
	// started, and returns what it ran before; it fails with
	// bridges.ErrNotRunning when the core is not running.
	Swap(removed []string, started map[string]bridges.Platform) (core.Swapped, error)
	// StartBot runs bot name's adapter until the core's run ends or
	// StopBot stops it; StopBot stops it and waits for its run to end.
	StartBot(ctx context.Context, name string, p bridges.Platform)
	StopBot(name string) bool
	// Go runs f in a goroutine the core's Run waits for.
	Go(f func())
	// SetSpares keeps the warm spares of the profiles the bots of
	// platforms use, with their current settings, and no others.
	SetSpares(platforms map[string]bridges.Platform)
	// SetContainment makes c how agents spawned from now on are confined.
	SetContainment(c agents.Containment)
	// SyncSchedules stores the config's schedules and wakes the scheduler
	// (nothing without one).
	SyncSchedules(ctx context.Context) error
}

var _ Host = (*core.Core)(nil)

// Conv is one conversation as a replacement sees it (worker.Conv, with its
// Replacement); its methods run on the conversation's worker only.
type Conv interface {
	Log() *slog.Logger
	Now() time.Time
	// Profile is the conversation's agent profile.
	Profile() *profile.Agent
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
