package reload

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
)

// DrainTimeout bounds how long a removed bot waits for its conversations'
// current turns before it stops anyway.
const DrainTimeout = 10 * time.Minute

// drainPoll is how often a removed bot looks whether its conversations'
// turns have finished.
const drainPoll = 250 * time.Millisecond

// Apply applies r, whose config h.Config already returns. It returns once
// the change is handed to every part; bots being removed finish in the
// background (h.Go: the core's Run waits for them). It fails only when
// the core is not running, or with the scheduler's error.
func Apply(ctx context.Context, h Host, r Reload) error {
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
			stop(h, name, p, r.Stopped)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Started)) {
		p := r.Started[name]
		h.StartBot(sw.RunCtx, name, p)
	}
	respawn := make(map[string]bool)
	for _, p := range r.Diff.ProfilesRespawn {
		respawn[p] = true
	}
	for _, w := range sw.Workers {
		force := r.Force
		if !w.Do(ctx, func(ctx context.Context, c worker.Conv) { onReload(ctx, c, cfg, respawn[c.Profile().Name], force) }) {
			h.Log().Debug("config reload not handed to a stopping conversation", "bot", w.Bot())
		}
	}
	for _, name := range r.Diff.BotsRemoved {
		if p := sw.Old[name]; p != nil {
			h.Go(func() { drain(sw.RunCtx, h, name, p, sw.Workers, r.Stopped) })
		}
	}
	h.SetSpares(sw.Next)
	if err := h.SyncSchedules(ctx); err != nil {
		return fmt.Errorf("apply reload: schedules: %w", err)
	}
	return nil
}

// stop stops the adapter of bot name, waits until its Run has returned,
// then calls stopped (which releases the adapter).
func stop(h Host, name string, p bridges.Platform, stopped func(string, bridges.Platform)) {
	h.StopBot(name)
	h.Log().Info("bot stopped by a config reload", "bot", name)
	if stopped != nil {
		stopped(name, p)
	}
}

// drain stops a removed bot once no conversation of it among workers has
// a turn running, a message in flight or an open card (or after
// DrainTimeout): each live conversation is told, and its agent stops.
func drain(ctx context.Context, h Host, name string, p bridges.Platform, workers []worker.Worker, stopped func(string, bridges.Platform)) {
	var mine []worker.Worker
	for _, w := range workers {
		if w.Bot() == name {
			mine = append(mine, w)
		}
	}
	// onAll runs f on every worker of mine still running and returns on
	// how many (a retired worker has no agent left to wait for).
	onAll := func(f func(context.Context, worker.Conv)) int {
		n := 0
		for _, w := range mine {
			if w.Do(ctx, f) {
				n++
			}
		}
		return n
	}
	onAll(func(ctx context.Context, c worker.Conv) {
		if c.InTurn() {
			c.Notice(ctx, "🔌 This bot was removed from the bridge's config: the current turn finishes, then the bot stops here.")
		}
	})
	deadline := h.Now().Add(DrainTimeout)
	for h.Now().Before(deadline) {
		busy := make(chan bool, len(mine))
		n := onAll(func(_ context.Context, c worker.Conv) { busy <- c.InTurn() })
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
	n := onAll(func(ctx context.Context, c worker.Conv) {
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
	stop(h, name, p, stopped)
}
