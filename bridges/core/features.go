package core

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/config"
)

// This file is what the core offers the features above it. To change what
// it runs while it runs (bridges/features/reload applies a config reload through
// it): the config in force, each bot's adapter run so that it can be
// stopped alone, the swap of the set of bots, warm spares, containment,
// and the live conversations' workers (worker.Worker: a feature's part in
// every conversation's worker is the worker's, worker.ConvFeature).

// Config is the config in force now (the new one once a reload swapped
// it); callers use it for one decision.
func (c *Core) Config() *config.Config { return c.cfg() }

// Log is the core's logger.
func (c *Core) Log() *slog.Logger { return c.log }

// Now reads the core's clock.
func (c *Core) Now() time.Time { return c.clock.Now() }

// ConfigGeneration is the generation of the config in force, when the core
// reads a *config.Live (zero otherwise).
func (c *Core) ConfigGeneration() config.Generation {
	if l, ok := c.src.(interface{ Generation() config.Generation }); ok {
		return l.Generation()
	}
	return config.Generation{}
}

// Running reports whether Run is running (a reload applies only then).
func (c *Core) Running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running
}

// SetContainment makes ct how agents spawned from now on are confined
// (CoreOptions.Spawner's Containment until then).
func (c *Core) SetContainment(ct agents.Containment) { c.contain.Store(&ct) }

// runBot runs bot name's adapter p with the core as its handler until ctx
// ends or StopBot stops it.
func (c *Core) runBot(ctx context.Context, name string, p bridges.Platform) error {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	b := &c.bots
	b.mu.Lock()
	if b.running == nil {
		b.running = make(map[string]botRun)
	}
	b.running[name] = botRun{cancel: cancel, done: done}
	b.mu.Unlock()
	defer close(done)
	defer cancel()
	return c.runPlatform(ctx, name, p)
}

// StartBot runs bot name's adapter p until the core's run ends or StopBot
// stops it (a bot a reload added or restarted; Swap made it one of the
// core's). Run waits for it.
func (c *Core) StartBot(ctx context.Context, name string, p bridges.Platform) {
	c.Go(func() {
		if err := c.runBot(ctx, name, p); err != nil {
			c.log.Error("bot stopped", "bot", name, "err", err)
		}
	})
}

// StopBot stops the run of bot name's adapter and waits for it to end;
// false: it was not running.
func (c *Core) StopBot(name string) bool {
	b := &c.bots
	b.mu.Lock()
	rb, ok := b.running[name]
	if ok {
		delete(b.running, name)
	}
	b.mu.Unlock()
	if ok {
		rb.cancel()
		<-rb.done
	}
	return ok
}

// Go runs f in a goroutine Run waits for before it returns (a bot's drain
// after a reload removed it).
func (c *Core) Go(f func()) { c.bots.tasks.Go(f) }

// SetSpares keeps the warm spares of the profiles the bots of platforms
// use, with the profiles' current settings, and stops keeping those of
// the profiles no bot of platforms uses any more.
func (c *Core) SetSpares(platforms map[string]bridges.Platform) {
	stop := c.keepSpares(platforms)
	kept := make(map[string]bool)
	cfg := c.cfg()
	for name := range platforms {
		if bot := cfg.Bot(name); bot != nil {
			for _, pn := range bot.Profiles() {
				if p := cfg.Agents[pn]; p != nil && p.KeepsSpares() {
					kept[p.Name] = true
				}
			}
		}
	}
	b := &c.bots
	b.mu.Lock()
	before := b.kept
	b.spares, b.kept = stop, kept
	b.mu.Unlock()
	for _, p := range slices.Sorted(maps.Keys(before)) {
		if !kept[p] {
			agents.StopSpares(c.pool, p)
		}
	}
}

// stopSpares stops keeping warm spares.
func (c *Core) stopSpares() {
	b := &c.bots
	b.mu.Lock()
	stop := b.spares
	b.spares = nil
	b.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// SyncSchedules stores the config's schedules and wakes the scheduler
// (nothing without one).
func (c *Core) SyncSchedules(ctx context.Context) error {
	sc := c.opts.Scheduler
	if sc == nil {
		return nil
	}
	if err := sc.Sync(ctx); err != nil {
		return err
	}
	sc.Wake()
	return nil
}

// Swap makes the core run the bots it runs minus removed plus started
// (their adapters are started with StartBot), and returns what it ran
// before; it fails with bridges.ErrNotRunning when the core is not
// running.
func (c *Core) Swap(removed []string, started map[string]bridges.Platform) (Swapped, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.running {
		return Swapped{}, bridges.ErrNotRunning
	}
	sw := Swapped{Old: maps.Clone(c.platforms), Next: maps.Clone(c.platforms), RunCtx: c.runCtx}
	for _, name := range removed {
		delete(sw.Next, name)
	}
	maps.Copy(sw.Next, started)
	c.platforms = sw.Next
	sw.Workers = slices.Collect(maps.Values(c.convs))
	return sw, nil
}

// The core as the scheduler sees it (ScheduleRuns; the scheduler itself
// fills the seam Scheduler). Everything else about schedules — the !schedule command,
// the agent's schedule tools and their approval card, the requests and
// their texts — is the feature's, bridges/features/schedule, registered from above
// (CoreOptions.Commands, CoreOptions.Tools).

var _ ScheduleRuns = (*Core)(nil)

// Platform implements ScheduleRuns.
func (c *Core) Platform(bot string) bridges.Platform { return c.platform(bot) }

// CountScheduledRun implements ScheduleRuns.
func (c *Core) CountScheduledRun(bot string) { c.opts.Metrics.Message(bot, "scheduled") }
