package core

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"

	agentpool "github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/reload"
	"github.com/agentbridge/agentbridge/config"
)

// This file is the core's face to config reloads (bridges/reload): the
// config in force (Core.cfg, backed by a *config.Live the reloader
// replaces whole), ApplyReload, and reload.Host and reload.Conv, which
// the core implements for it.

// Reload is one applied reload (see Core.ApplyReload).
type Reload = reload.Reload

// cfg is the config in force now; callers use it for one decision.
func (c *Core) cfg() *config.Config {
	if c.src == nil {
		return nil
	}
	return c.src.Current()
}

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

// ApplyReload applies r, whose config the core's Config source already
// returns (see reload.Bots.Apply). It returns once the change is handed to
// every part; bots being removed finish in the background (Run waits for
// them). It fails only when the core is not running.
func (c *Core) ApplyReload(ctx context.Context, r Reload) error {
	return c.bots.Apply(ctx, reloadHost{c}, r)
}

// reloadHost is the core as reloads see it.
type reloadHost struct{ c *Core }

var _ reload.Host = reloadHost{}

func (h reloadHost) Log() *slog.Logger      { return h.c.log }
func (h reloadHost) Now() time.Time         { return h.c.clock.Now() }
func (h reloadHost) Config() *config.Config { return h.c.cfg() }
func (h reloadHost) KeepSpares(ps map[string]bridges.Platform) (stop func()) {
	return h.c.keepSpares(ps)
}
func (h reloadHost) SetContainment(ct reload.Containment) { h.c.contain.Store(&ct) }

func (h reloadHost) RunPlatform(ctx context.Context, name string, p bridges.Platform) error {
	return h.c.runPlatform(ctx, name, p)
}

func (h reloadHost) DropSpares(profile string) {
	if wp, ok := h.c.pool.(WarmPool); ok {
		wp.KeepSpares(agentpool.SpareConfig{Limit: agentpool.Limit{Profile: profile}, Count: 0})
	}
}

func (h reloadHost) SyncSchedules(ctx context.Context) error {
	sc := h.c.opts.Scheduler
	if sc == nil {
		return nil
	}
	if err := sc.Sync(ctx); err != nil {
		return err
	}
	sc.Wake()
	return nil
}

func (h reloadHost) Swap(removed []string, started map[string]bridges.Platform) (reload.Swapped, error) {
	c := h.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.running {
		return reload.Swapped{}, bridges.ErrNotRunning
	}
	sw := reload.Swapped{Old: maps.Clone(c.platforms), Next: maps.Clone(c.platforms), RunCtx: c.runCtx}
	for _, name := range removed {
		delete(sw.Next, name)
	}
	maps.Copy(sw.Next, started)
	c.platforms = sw.Next
	for _, cv := range slices.Collect(maps.Values(c.convs)) {
		sw.Workers = append(sw.Workers, reloadWorker{cv})
	}
	return sw, nil
}

// reloadWorker is a conversation's worker as reloads see it.
type reloadWorker struct{ cv *conversation }

func (w reloadWorker) Bot() string { return w.cv.key.Bot }

func (w reloadWorker) Do(ctx context.Context, f func(context.Context, reload.Conv)) bool {
	return w.cv.q.PushWait(ctx, inCall{func(ctx context.Context, cv *conversation) { f(ctx, reloadConv{cv}) }}) == nil
}

// reloadConv is the conversation as reloads see it; its methods run on
// the worker.
type reloadConv struct{ cv *conversation }

var _ reload.Conv = reloadConv{}

func (r reloadConv) Log() *slog.Logger                    { return r.cv.log }
func (r reloadConv) Now() time.Time                       { return r.cv.core.clock.Now() }
func (r reloadConv) Profile() string                      { return r.cv.profile.Name }
func (r reloadConv) Spawned() bool                        { return r.cv.sess != nil || r.cv.acquiring }
func (r reloadConv) Live() bool                           { return r.cv.sess != nil }
func (r reloadConv) InTurn() bool                         { return r.cv.busyWithTurn() }
func (r reloadConv) AgentBusy() bool                      { return sessionBusy(r.cv.sess) }
func (r reloadConv) Notice(ctx context.Context, t string) { r.cv.notice(ctx, t) }
func (r reloadConv) Restart(ctx context.Context)          { r.cv.restartProcess(ctx) }
func (r reloadConv) Stop(ctx context.Context, exp string) { r.cv.closeSession(ctx, exp) }
func (r reloadConv) Replacement() *reload.Replacement     { return &r.cv.replace }

// Refresh implements reload.Conv: a removed bot keeps its last entry while
// it drains; a restarted bot's new adapter is taken.
func (r reloadConv) Refresh(cfg *config.Config) {
	cv := r.cv
	if b := cfg.Bot(cv.key.Bot); b != nil {
		cv.bot = b
	}
	if p := cv.core.platform(cv.key.Bot); p != nil && p != cv.platform {
		cv.platform = p
	}
	if p := cfg.Agents[cv.profile.Name]; p != nil {
		cv.profile = p
	}
	if o := cv.row.AgentOverride; o != "" && !slices.Contains(agentChoices(cfg, cv.bot, cv.row), o) {
		cv.agentGone = o // back to the default at the next message (revertAgent)
	}
}

// Recheck implements reload.Conv.
func (r reloadConv) Recheck(d time.Duration) {
	q, ctx := r.cv.q, r.cv.core.runCtx
	r.cv.core.clock.AfterFunc(d, func() {
		_ = q.PushWait(ctx, inCall{func(ctx context.Context, cv *conversation) { cv.replace.Check(ctx, reloadConv{cv}) }})
	})
}

// busyWithTurn reports whether the conversation's agent is in a turn: a
// turn running, a message in flight, an open card, or starting.
func (cv *conversation) busyWithTurn() bool {
	return cv.acquiring || cv.turn != nil || len(cv.inflight) > 0 || cv.cards.Len() > 0 || cv.resuming
}

// holdsForReplacement reports whether pending messages wait for the
// replacement of the agent after a reload (reload.Replacement.Holds).
func (cv *conversation) holdsForReplacement() bool { return cv.replace.Holds(cv.sess != nil) }

// configStatusLine is !status's line about the config in force.
func (cv *conversation) configStatusLine() string {
	return reload.StatusLine(cv.core.ConfigGeneration(), cv.replace.Due())
}

// containment is how agents are confined now: CoreOptions.Sandboxes and
// Networks, or what the last reload set (reload.Host.SetContainment).
func (c *Core) containment() reload.Containment {
	if ct := c.contain.Load(); ct != nil {
		return *ct
	}
	return reload.Containment{Sandboxes: c.opts.Sandboxes, Networks: c.opts.Networks}
}
