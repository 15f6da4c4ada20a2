package core

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	agentpool "github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/config"
)

// This file applies a config reload to the running core. The config
// itself is one value the core reads at each decision (Core.cfg, backed by
// a *config.Live that the reloader replaces whole); what cannot be read
// that way is handed over here:
//   - each live conversation's bot and profile (its worker's copies)
//     are refreshed on its worker;
//   - a conversation whose profile's spawn settings changed replaces its
//     agent process at its next idle moment (never mid-turn), resuming the
//     same session; a background task delays that, telling the thread,
//     unless the reload is forced (bridge reload -now);
//   - bots added start, bots removed stop once their conversations' turns
//     have finished, bots whose platform settings changed restart;
//   - warm spares and the config's schedules follow the new config.

// Reload is one applied reload (see Core.ApplyReload).
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
}

// botDrainTimeout bounds how long a removed bot waits for its
// conversations' current turns before it stops anyway.
const botDrainTimeout = 10 * time.Minute

// drainPoll is how often a removed bot looks whether its conversations'
// turns have finished.
const drainPoll = 250 * time.Millisecond

// reloadState is the core's part of reloads: a stop function per running
// bot and the goroutines reloads start (bots' platforms, drains).
type reloadState struct {
	mu     sync.Mutex
	bots   map[string]runningBot // by bot name: its platform's stop (runBot)
	spares func()                // stops keeping the current warm spares
	kept   map[string]bool       // profiles whose spares are kept
	tasks  sync.WaitGroup        // platforms and drains started by ApplyReload
}

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

// runBot runs the platform of bot name (runPlatform) until ctx ends or
// stopBot stops it.
func (c *Core) runBot(ctx context.Context, name string, p bridges.Platform) error {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	c.reload.mu.Lock()
	if c.reload.bots == nil {
		c.reload.bots = make(map[string]runningBot)
	}
	c.reload.bots[name] = runningBot{cancel: cancel, done: done}
	c.reload.mu.Unlock()
	defer close(done)
	defer cancel()
	return c.runPlatform(ctx, name, p)
}

// runningBot stops a bot's platform and says when its Run has returned.
type runningBot struct {
	cancel context.CancelFunc
	done   <-chan struct{}
}

// setSpares keeps the warm spares of platforms' profiles. A profile kept
// before gets its new settings (the pool replaces spares spawned with
// options the profile no longer has); one no longer kept stops keeping
// spares.
func (c *Core) setSpares(platforms map[string]bridges.Platform) {
	stop := c.keepSpares(platforms)
	kept := make(map[string]bool)
	cfg := c.cfg()
	for name := range platforms {
		if b := cfg.Bot(name); b != nil {
			if p := cfg.Agents[b.Agent]; p != nil && p.KeepsSpares() {
				kept[p.Name] = true
			}
		}
	}
	c.reload.mu.Lock()
	before := c.reload.kept
	c.reload.spares, c.reload.kept = stop, kept
	c.reload.mu.Unlock()
	wp, ok := c.pool.(WarmPool)
	if !ok {
		return
	}
	for _, p := range slices.Sorted(maps.Keys(before)) {
		if !kept[p] {
			wp.KeepSpares(agentpool.SpareConfig{Limit: agentpool.Limit{Profile: p}, Count: 0})
		}
	}
}

// stopSpares stops keeping warm spares (Run's end).
func (c *Core) stopSpares() {
	c.reload.mu.Lock()
	stop := c.reload.spares
	c.reload.spares = nil
	c.reload.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// ApplyReload applies r, whose config the core's Config source already
// returns. It returns once the change is handed to every part; bots being
// removed finish in the background (Run waits for them). It fails only
// when the core is not running.
func (c *Core) ApplyReload(ctx context.Context, r Reload) error {
	cfg := c.cfg()
	c.mu.Lock()
	if !c.running {
		c.mu.Unlock()
		return bridges.ErrNotRunning
	}
	runCtx := c.runCtx
	old := maps.Clone(c.platforms)
	next := maps.Clone(c.platforms)
	for _, name := range r.Diff.BotsRemoved {
		delete(next, name)
	}
	for name, p := range r.Started {
		next[name] = p
	}
	c.platforms = next
	convs := slices.Collect(maps.Values(c.convs))
	c.mu.Unlock()

	for _, name := range r.Diff.BotsRestarted {
		if p := old[name]; p != nil {
			c.stopBot(name, p, r.Stopped)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Started)) {
		p := r.Started[name]
		c.reload.tasks.Go(func() {
			if err := c.runBot(runCtx, name, p); err != nil {
				c.log.Error("bot stopped", "bot", name, "err", err)
			}
		})
	}
	respawn := make(map[string]bool)
	for _, p := range r.Diff.ProfilesRespawn {
		respawn[p] = true
	}
	for _, cv := range convs {
		force := r.Force
		if err := cv.q.PushWait(ctx, inCall{func(ctx context.Context, cv *conversation) {
			cv.onReload(ctx, cfg, respawn[cv.profile.Name], force)
		}}); err != nil {
			cv.log.Debug("config reload not handed to a stopping conversation", "err", err)
		}
	}
	for _, name := range r.Diff.BotsRemoved {
		if p := old[name]; p != nil {
			c.reload.tasks.Go(func() { c.drainBot(runCtx, name, p, convs, r.Stopped) })
		}
	}
	c.setSpares(next)
	if sc := c.opts.Scheduler; sc != nil {
		if err := sc.Sync(ctx); err != nil {
			return fmt.Errorf("apply reload: schedules: %w", err)
		}
		sc.Wake()
	}
	return nil
}

// stopBot stops the platform of bot name, waits until its Run has
// returned, then calls stopped (which releases the adapter).
func (c *Core) stopBot(name string, p bridges.Platform, stopped func(string, bridges.Platform)) {
	c.reload.mu.Lock()
	rb, ok := c.reload.bots[name]
	if ok && rb.done != nil {
		delete(c.reload.bots, name)
	}
	c.reload.mu.Unlock()
	if ok {
		rb.cancel()
		<-rb.done
	}
	c.log.Info("bot stopped by a config reload", "bot", name)
	if stopped != nil {
		stopped(name, p)
	}
}

// drainBot stops a removed bot once no conversation of it among convs has
// a turn running, a message in flight or an open card (or after
// botDrainTimeout): each live conversation is told, and its agent stops.
func (c *Core) drainBot(ctx context.Context, name string, p bridges.Platform, convs []*conversation, stopped func(string, bridges.Platform)) {
	var mine []*conversation
	for _, cv := range convs {
		if cv.key.Bot == name {
			mine = append(mine, cv)
		}
	}
	// onAll runs f on every worker of mine still running and returns on
	// how many (a retired worker has no agent left to wait for).
	onAll := func(f func(context.Context, *conversation)) int {
		n := 0
		for _, cv := range mine {
			if cv.q.PushWait(ctx, inCall{f}) == nil {
				n++
			}
		}
		return n
	}
	onAll(func(ctx context.Context, cv *conversation) {
		if cv.busyWithTurn() {
			cv.notice(ctx, "🔌 This bot was removed from the bridge's config: the current turn finishes, then the bot stops here.")
		}
	})
	deadline := c.clock.Now().Add(botDrainTimeout)
	for c.clock.Now().Before(deadline) {
		busy := make(chan bool, len(mine))
		n := onAll(func(_ context.Context, cv *conversation) { busy <- cv.busyWithTurn() })
		anyBusy := false
		for range n {
			select {
			case b := <-busy:
				anyBusy = anyBusy || b
			case <-ctx.Done():
				return
			}
		}
		if !anyBusy {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(drainPoll):
		}
	}
	closed := make(chan struct{}, len(mine))
	n := onAll(func(ctx context.Context, cv *conversation) {
		defer func() { closed <- struct{}{} }()
		if cv.sess != nil {
			cv.closeSession(ctx, "⌛ Expired: the bot was removed.")
			cv.notice(ctx, "🔌 This bot was removed from the bridge's config and has stopped; its agent was stopped.")
		}
	})
	for range n { // the notices are posted before the adapter stops
		select {
		case <-closed:
		case <-ctx.Done():
			return
		}
	}
	c.stopBot(name, p, stopped)
}

// busyWithTurn reports whether the conversation's agent is in a turn: a
// turn running, a message in flight, an open card, or starting.
func (cv *conversation) busyWithTurn() bool {
	return cv.acquiring || cv.turn != nil || len(cv.inflight) > 0 || cv.cards.Len() > 0 || cv.resuming
}

// Replacement states of a conversation's agent after a reload.
const (
	replaceNone  = iota
	replaceIdle  // at the next idle moment: no turn, no background task
	replaceForce // at the next moment without a turn, background tasks or not
)

// onReload runs on the worker: it takes the new config's bot and profile
// (rules, access lists, timeouts apply from the next decision) and, when
// the profile's spawn settings changed, marks the agent for replacement.
func (cv *conversation) onReload(ctx context.Context, cfg *config.Config, respawn, force bool) {
	if b := cfg.Bot(cv.key.Bot); b != nil {
		cv.bot = b // a removed bot keeps its last entry while it drains
	}
	if p := cv.core.platform(cv.key.Bot); p != nil && p != cv.platform {
		cv.platform = p // a restarted adapter
	}
	if p := cfg.Agents[cv.profile.Name]; p != nil {
		cv.profile = p
	}
	if respawn && (cv.sess != nil || cv.acquiring) {
		cv.replacing = max(cv.replacing, replaceIdle)
		if force {
			cv.replacing = replaceForce
		}
	}
	cv.replaceIfIdle(ctx)
}

// replaceIfIdle replaces the agent process marked by onReload once it is
// idle (the worker calls it after every input): the next message spawns
// one with the new settings, resuming the session, so history is kept.
// It never interrupts a turn; a background task waits unless forced, and
// the thread is told once that the replacement waits for it.
func (cv *conversation) replaceIfIdle(ctx context.Context) {
	if cv.replacing == replaceNone {
		return
	}
	if cv.sess == nil && !cv.acquiring {
		cv.replacing, cv.replaceTold = replaceNone, false // the next spawn uses the new profile anyway
		clear(cv.bgTasks)
		return
	}
	if cv.busyWithTurn() {
		return
	}
	bg := len(cv.bgTasks) > 0
	if bg && cv.replacing != replaceForce {
		if !cv.replaceTold {
			cv.replaceTold = true
			cv.notice(ctx, "🔄 The bridge's config changed for this agent ("+render.CodeSpan(cv.profile.Name)+"). It restarts with the new settings "+
				"once its background task has finished; the conversation's history is kept.")
		}
		return
	}
	if !bg && sessionBusy(cv.sess) {
		return // a turn the agent started itself
	}
	if now := cv.core.clock.Now(); now.Before(cv.replaceAfter) {
		cv.wakeForReplace(cv.replaceAfter.Sub(now))
		return // the agent may still answer a background task that just ended
	}
	cv.replacing, cv.replaceTold = replaceNone, false
	clear(cv.bgTasks)
	cv.log.Info("agent replaced after a config reload", "profile", cv.profile.Name, "background_task_ended", bg)
	if bg {
		cv.notice(ctx, "🔄 The bridge's config changed for this agent ("+render.CodeSpan(cv.profile.Name)+"): an admin restarted it now, "+
			"which ended its background task. The conversation's history is kept.")
	}
	cv.restartProcess(ctx)
}

// taskSettle is how long after its last background task ended an agent
// due for replacement is left to start its own turn on the task's result.
const taskSettle = 3 * time.Second

// wakeForReplace looks at the replacement again after d.
func (cv *conversation) wakeForReplace(d time.Duration) {
	q, ctx := cv.q, cv.core.runCtx
	cv.core.clock.AfterFunc(d, func() {
		_ = q.PushWait(ctx, inCall{func(ctx context.Context, cv *conversation) { cv.replaceIfIdle(ctx) }})
	})
}

// holdsForReplacement reports whether pending messages wait for the
// replacement of the agent instead of going to the old process: a
// replacement is due and only a turn ending stands before it (while a
// background task delays it unforced, the old process keeps answering).
func (cv *conversation) holdsForReplacement() bool {
	return cv.replacing != replaceNone && cv.sess != nil && (len(cv.bgTasks) == 0 || cv.replacing == replaceForce)
}

// noteTasks keeps the set of the agent's running background tasks from
// its events (the worker calls it for each event of the live session).
func (cv *conversation) noteTasks(ev streamjson.Event) {
	switch e := ev.(type) {
	case streamjson.TaskStarted:
		if e.Background {
			cv.bgTasks[e.TaskID] = true
		}
	case streamjson.TaskNotification:
		delete(cv.bgTasks, e.TaskID)
		if cv.replacing != replaceNone && len(cv.bgTasks) == 0 {
			// The CLI starts a turn of its own on the task's result: give
			// it the time to begin before the process is replaced.
			cv.replaceAfter = cv.core.clock.Now().Add(taskSettle)
		}
	case streamjson.BackgroundTasks:
		clear(cv.bgTasks)
		for _, t := range e.Tasks {
			cv.bgTasks[t.TaskID] = true
		}
	case streamjson.Exit:
		clear(cv.bgTasks)
	}
}

// configStatusLine is !status's line about the config in force.
func (cv *conversation) configStatusLine() string {
	g := cv.core.ConfigGeneration()
	if g.Number == 0 {
		return ""
	}
	line := fmt.Sprintf("\n• config: generation %d, in force since %s", g.Number, g.At.UTC().Format("2006-01-02 15:04:05 UTC"))
	if cv.replacing != replaceNone {
		line += " (the agent restarts with it when idle)"
	}
	return strings.TrimRight(line, " ")
}

// Running reports whether Run is running (a reload applies only then).
func (c *Core) Running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running
}
