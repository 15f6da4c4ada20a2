package core

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/config"
)

// This file is what the core offers the features above it. To change what
// it runs while it runs (bridges/features/reload applies a config reload through
// it): the config in force, each bot's adapter run so that it can be
// stopped alone, the swap of the set of bots, warm spares, containment,
// and the live conversations' workers. And a part in every conversation's
// worker (the second half of the file).

// cfg is the config in force now; callers use it for one decision.
func (c *Core) cfg() *config.Config {
	if c.src == nil {
		return nil
	}
	return c.src.Current()
}

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

// botRuns are the bots' adapters running, each with its own context so
// that one can be stopped alone (StopBot), and the tasks started through
// Go, which Run waits for.
type botRuns struct {
	mu      sync.Mutex
	running map[string]botRun // by bot name
	spares  func()            // stops keeping the current warm spares
	kept    map[string]bool   // profiles whose spares are kept
	tasks   sync.WaitGroup    // adapters started by StartBot, and Go's
}

// botRun is one adapter's run.
type botRun struct {
	cancel context.CancelFunc
	done   <-chan struct{}
}

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

// Swapped is what the core ran before a Swap.
type Swapped struct {
	Old  map[string]bridges.Platform // the bots' adapters before, by name
	Next map[string]bridges.Platform // and after
	// RunCtx is the core's run context: what a reload starts ends with it.
	RunCtx context.Context
	// Workers are the live conversations' workers.
	Workers []Worker
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
	for _, cv := range slices.Collect(maps.Values(c.convs)) {
		sw.Workers = append(sw.Workers, Worker{cv})
	}
	return sw, nil
}

// Worker is one live conversation's worker.
type Worker struct{ cv *conversation }

// Bot is the name of the conversation's bot.
func (w Worker) Bot() string { return w.cv.key.Bot }

// Do runs f on the worker, after the input queued before it; it waits for
// room in the queue and reports false when the worker has stopped (or ctx
// ended) and f will not run.
func (w Worker) Do(ctx context.Context, f func(ctx context.Context, c Conv)) bool {
	return w.cv.q.PushWait(ctx, inCall{func(ctx context.Context, cv *conversation) { f(ctx, Conv{cv}) }}) == nil
}

// busyWithTurn reports whether the conversation's agent is in a turn: a
// turn running, a message in flight, an open card, or starting.
func (cv *conversation) busyWithTurn() bool {
	return cv.acquiring || cv.turn != nil || len(cv.inflight) > 0 || cv.cards.Len() > 0 || cv.resuming
}

// This file is how a feature above the core keeps a part of its own in
// every conversation's worker (bridges/features/reload: the agent replaced after a
// reload): ConvFeature, registered in CoreOptions.ConvFeatures, attaches a
// ConvHook to each new worker, and acts on the conversation through Conv.

// ConvFeature is a feature with a part in each conversation's worker.
type ConvFeature interface {
	// Attach returns the feature's hook for the new worker of c, when the
	// worker is made (before its first input; Conv's methods may not be
	// called yet).
	Attach(c Conv) ConvHook
}

// ConvHook is a feature's part of one conversation's worker. Every method
// runs on the worker, so it needs no lock and must not block.
type ConvHook interface {
	// AgentEvent sees each event of the conversation's live agent, before
	// the core handles it.
	AgentEvent(ev streamjson.Event, now time.Time)
	// AfterInput runs after each input the worker handled.
	AfterInput(ctx context.Context)
	// HoldsInput reports whether the people's pending messages must wait
	// instead of going to the agent now.
	HoldsInput() bool
	// StatusLine is the feature's part of !status ("" for none; each line
	// starts with "\n").
	StatusLine() string
}

// attachHooks attaches every registered feature's hook to the new worker cv.
func (c *Core) attachHooks(cv *conversation) {
	for _, f := range c.opts.ConvFeatures {
		cv.hooks = append(cv.hooks, f.Attach(Conv{cv}))
	}
}

// Commands are the chat commands (bridges/features/commands' Table, with the
// commands features register), run on the conversation's worker.
type Commands interface {
	// Handle runs text, which person who wrote in ledger message msgID of
	// conversation c, as a chat command if it is one: it runs it, or
	// refuses it with a notice (who may not run it, or it is written with
	// characters a command may not contain). handled reports whether text
	// was a command; if not, it goes to the agent.
	Handle(ctx context.Context, c Conv, msgID string, who Person, text string) (handled bool)
}

var (
	// ErrStarting: the conversation's agent is starting.
	ErrStarting = errors.New("the agent is starting")
	// ErrResuming: a !resume is under way in the conversation.
	ErrResuming = errors.New("a resume is under way")
	// ErrWorking: the conversation's agent is working (a turn, a message
	// in flight, an open card, or it is starting).
	ErrWorking = errors.New("the agent is working")
	// ErrSessionBusy: the session's agent is working in its conversation.
	ErrSessionBusy = errors.New("the session's agent is working in its thread")
)

// Conv is one conversation as a feature above the core sees it: a handle
// on its worker. Its methods run on the worker only (in a ConvHook's
// methods, or in a function given to Worker.Do or Conv.After).
type Conv struct{ cv *conversation }

// Hooks are the hooks the features attached to this conversation, in
// CoreOptions.ConvFeatures' order (a feature finds its own by type).
func (c Conv) Hooks() []ConvHook { return c.cv.hooks }

// Log is the conversation's logger.
func (c Conv) Log() *slog.Logger { return c.cv.log }

// Now reads the core's clock.
func (c Conv) Now() time.Time { return c.cv.core.clock.Now() }

// Key is the conversation's key.
func (c Conv) Key() bridges.ConversationKey { return c.cv.key }

// ConfigGeneration is the generation of the config in force
// (Core.ConfigGeneration).
func (c Conv) ConfigGeneration() config.Generation { return c.cv.core.ConfigGeneration() }

// Spawned reports whether the conversation has an agent process or is
// starting one; Live whether it has one.
func (c Conv) Spawned() bool { return c.cv.sess != nil || c.cv.acquiring }

// Live reports whether the conversation has an agent process.
func (c Conv) Live() bool { return c.cv.sess != nil }

// InTurn reports whether the agent is in a turn: a turn running, a
// message in flight, an open card, or starting.
func (c Conv) InTurn() bool { return c.cv.busyWithTurn() }

// AgentBusy reports whether the live agent runs a turn it started itself
// (on a background task's result).
func (c Conv) AgentBusy() bool { return sessionBusy(c.cv.sess) }

// Notice posts text into the conversation.
func (c Conv) Notice(ctx context.Context, text string) { c.cv.notice(ctx, text) }

// Restart stops the idle agent process: the next message spawns one with
// the profile's settings, resuming the same session.
func (c Conv) Restart(ctx context.Context) { c.cv.restartProcess(ctx) }

// Stop stops the agent process for good, closing its open cards with
// expired as their status (a removed bot).
func (c Conv) Stop(ctx context.Context, expired string) { c.cv.closeSession(ctx, expired) }

// After runs f on the worker after d, unless the core stopped.
func (c Conv) After(d time.Duration, f func(ctx context.Context, c Conv)) {
	q, ctx := c.cv.q, c.cv.core.runCtx
	c.cv.core.clock.AfterFunc(d, func() {
		_ = q.PushWait(ctx, inCall{func(ctx context.Context, cv *conversation) { f(ctx, Conv{cv}) }})
	})
}

// Refresh takes cfg's entry of the conversation's bot and profile (rules,
// access lists, timeouts apply from the next decision) and the bot's
// current adapter. A bot or profile cfg lacks keeps its last (a removed
// bot keeps its entry while it drains).
func (c Conv) Refresh(cfg *config.Config) {
	cv := c.cv
	if b := cfg.Bot(cv.key.Bot); b != nil {
		cv.bot = b
	}
	if p := cv.core.platform(cv.key.Bot); p != nil && p != cv.platform {
		cv.platform = p
		cv.screen.SetPlatform(p)
	}
	if p := cfg.Agents[cv.profile.Name]; p != nil {
		cv.profile = p
	}
	if o := cv.row.AgentOverride; o != "" && !slices.Contains(agentChoices(cfg, cv.bot, cv.row), o) {
		cv.agentGone = o // back to the default at the next message (revertAgent)
	}
}

// holdsInput reports whether a hook holds the people's pending messages.
func (cv *conversation) holdsInput() bool {
	for _, h := range cv.hooks {
		if h.HoldsInput() {
			return true
		}
	}
	return false
}

// hookStatusLines are the hooks' lines of !status.
func (cv *conversation) hookStatusLines() string {
	var s string
	for _, h := range cv.hooks {
		s += h.StatusLine()
	}
	return s
}
