package reload

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
)

// DrainTimeout bounds how long a removed bot waits for its conversations'
// current turns before it stops anyway.
const DrainTimeout = 10 * time.Minute

// drainPoll is how often a removed bot looks whether its conversations'
// turns have finished.
const drainPoll = 250 * time.Millisecond

// Bots is the core's part of reloads: a stop function per running bot,
// the warm spares kept, and the goroutines reloads start (bots' adapters,
// drains), which Wait waits for. The zero value is ready; the core owns
// one. Safe for concurrent use.
type Bots struct {
	mu      sync.Mutex
	running map[string]runningBot // by bot name
	spares  func()                // stops keeping the current warm spares
	kept    map[string]bool       // profiles whose spares are kept
	tasks   sync.WaitGroup        // adapters and drains started by Apply
}

// runningBot stops a bot's adapter and says when its Run has returned.
type runningBot struct {
	cancel context.CancelFunc
	done   <-chan struct{}
}

// Run runs bot name's adapter p (h.RunPlatform) until ctx ends or a
// reload stops it.
func (b *Bots) Run(ctx context.Context, h Host, name string, p bridges.Platform) error {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	b.mu.Lock()
	if b.running == nil {
		b.running = make(map[string]runningBot)
	}
	b.running[name] = runningBot{cancel: cancel, done: done}
	b.mu.Unlock()
	defer close(done)
	defer cancel()
	return h.RunPlatform(ctx, name, p)
}

// Wait waits for the adapters and drains reloads started; call it once
// the run context has ended.
func (b *Bots) Wait() { b.tasks.Wait() }

// SetSpares keeps the warm spares of platforms' profiles. A profile kept
// before gets its new settings (the pool replaces spares spawned with
// options the profile no longer has); one no longer kept stops keeping
// spares.
func (b *Bots) SetSpares(h Host, platforms map[string]bridges.Platform) {
	stop := h.KeepSpares(platforms)
	kept := make(map[string]bool)
	cfg := h.Config()
	for name := range platforms {
		if bot := cfg.Bot(name); bot != nil {
			for _, pn := range bot.Profiles() {
				if p := cfg.Agents[pn]; p != nil && p.KeepsSpares() {
					kept[p.Name] = true
				}
			}
		}
	}
	b.mu.Lock()
	before := b.kept
	b.spares, b.kept = stop, kept
	b.mu.Unlock()
	for _, p := range slices.Sorted(maps.Keys(before)) {
		if !kept[p] {
			h.DropSpares(p)
		}
	}
}

// StopSpares stops keeping warm spares (the run's end).
func (b *Bots) StopSpares() {
	b.mu.Lock()
	stop := b.spares
	b.spares = nil
	b.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// Apply applies r, whose config h.Config already returns. It returns once
// the change is handed to every part; bots being removed finish in the
// background (b.Wait waits for them). It fails only when the core is not
// running, or with the scheduler's error.
func (b *Bots) Apply(ctx context.Context, h Host, r Reload) error {
	cfg := h.Config()
	if r.Containment != nil {
		h.SetContainment(*r.Containment)
	}
	sw, err := h.Swap(r.Diff.BotsRemoved, r.Started)
	if err != nil {
		return fmt.Errorf("apply reload: %w", err)
	}
	for _, name := range r.Diff.BotsRestarted {
		if p := sw.Old[name]; p != nil {
			b.stop(h, name, p, r.Stopped)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Started)) {
		p := r.Started[name]
		b.tasks.Go(func() {
			if err := b.Run(sw.RunCtx, h, name, p); err != nil {
				h.Log().Error("bot stopped", "bot", name, "err", err)
			}
		})
	}
	respawn := make(map[string]bool)
	for _, p := range r.Diff.ProfilesRespawn {
		respawn[p] = true
	}
	for _, w := range sw.Workers {
		force := r.Force
		if !w.Do(ctx, func(ctx context.Context, c Conv) { OnReload(ctx, c, cfg, respawn[c.Profile()], force) }) {
			h.Log().Debug("config reload not handed to a stopping conversation", "bot", w.Bot())
		}
	}
	for _, name := range r.Diff.BotsRemoved {
		if p := sw.Old[name]; p != nil {
			b.tasks.Go(func() { b.drain(sw.RunCtx, h, name, p, sw.Workers, r.Stopped) })
		}
	}
	b.SetSpares(h, sw.Next)
	if err := h.SyncSchedules(ctx); err != nil {
		return fmt.Errorf("apply reload: schedules: %w", err)
	}
	return nil
}

// stop stops the adapter of bot name, waits until its Run has returned,
// then calls stopped (which releases the adapter).
func (b *Bots) stop(h Host, name string, p bridges.Platform, stopped func(string, bridges.Platform)) {
	b.mu.Lock()
	rb, ok := b.running[name]
	if ok && rb.done != nil {
		delete(b.running, name)
	}
	b.mu.Unlock()
	if ok {
		rb.cancel()
		<-rb.done
	}
	h.Log().Info("bot stopped by a config reload", "bot", name)
	if stopped != nil {
		stopped(name, p)
	}
}

// drain stops a removed bot once no conversation of it among workers has
// a turn running, a message in flight or an open card (or after
// DrainTimeout): each live conversation is told, and its agent stops.
func (b *Bots) drain(ctx context.Context, h Host, name string, p bridges.Platform, workers []Worker, stopped func(string, bridges.Platform)) {
	var mine []Worker
	for _, w := range workers {
		if w.Bot() == name {
			mine = append(mine, w)
		}
	}
	// onAll runs f on every worker of mine still running and returns on
	// how many (a retired worker has no agent left to wait for).
	onAll := func(f func(context.Context, Conv)) int {
		n := 0
		for _, w := range mine {
			if w.Do(ctx, f) {
				n++
			}
		}
		return n
	}
	onAll(func(ctx context.Context, c Conv) {
		if c.InTurn() {
			c.Notice(ctx, "🔌 This bot was removed from the bridge's config: the current turn finishes, then the bot stops here.")
		}
	})
	deadline := h.Now().Add(DrainTimeout)
	for h.Now().Before(deadline) {
		busy := make(chan bool, len(mine))
		n := onAll(func(_ context.Context, c Conv) { busy <- c.InTurn() })
		anyBusy := false
		for range n {
			select {
			case v := <-busy:
				anyBusy = anyBusy || v
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
	n := onAll(func(ctx context.Context, c Conv) {
		defer func() { closed <- struct{}{} }()
		if c.Live() {
			c.Stop(ctx, "⌛ Expired: the bot was removed.")
			c.Notice(ctx, "🔌 This bot was removed from the bridge's config and has stopped; its agent was stopped.")
		}
	})
	for range n { // the notices are posted before the adapter stops
		select {
		case <-closed:
		case <-ctx.Done():
			return
		}
	}
	b.stop(h, name, p, stopped)
}
