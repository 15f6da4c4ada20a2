package reload_test

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/features/reload"
	"github.com/agentbridge/agentbridge/config"
)

// namedPlatform is an adapter the test tells apart by name.
type namedPlatform struct {
	bridges.Platform
	name string
}

// fakeHost runs adapters until their context ends or StopBot, as the
// core does, and records it.
type fakeHost struct {
	runCtx  context.Context
	mu      sync.Mutex
	running map[*namedPlatform]bool
	stops   map[string]func() // by bot: cancel the run and wait for it
	started chan *namedPlatform
	current map[string]bridges.Platform
	tasks   sync.WaitGroup
}

func newFakeHost(ctx context.Context) *fakeHost {
	return &fakeHost{runCtx: ctx, running: map[*namedPlatform]bool{}, stops: map[string]func(){},
		started: make(chan *namedPlatform, 8), current: map[string]bridges.Platform{}}
}

func (h *fakeHost) Log() *slog.Logger      { return slog.New(slog.DiscardHandler) }
func (h *fakeHost) Now() time.Time         { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
func (h *fakeHost) Config() *config.Config { return &config.Config{} }
func (h *fakeHost) Swap(removed []string, started map[string]bridges.Platform) (core.Swapped, error) {
	old := h.current
	next := maps.Clone(old)
	for _, r := range removed {
		delete(next, r)
	}
	maps.Copy(next, started)
	h.current = next
	return core.Swapped{Old: old, Next: next, RunCtx: h.runCtx}, nil
}

func (h *fakeHost) StartBot(ctx context.Context, name string, p bridges.Platform) {
	np := p.(*namedPlatform)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	h.mu.Lock()
	h.running[np] = true
	h.stops[name] = func() { cancel(); <-done }
	h.mu.Unlock()
	h.Go(func() {
		defer close(done)
		h.started <- np
		<-ctx.Done()
		h.mu.Lock()
		h.running[np] = false
		h.mu.Unlock()
	})
}

func (h *fakeHost) StopBot(name string) bool {
	h.mu.Lock()
	stop := h.stops[name]
	delete(h.stops, name)
	h.mu.Unlock()
	if stop != nil {
		stop()
	}
	return stop != nil
}

func (h *fakeHost) Go(f func())                           { h.tasks.Go(f) }
func (h *fakeHost) SetSpares(map[string]bridges.Platform) {}
func (h *fakeHost) SetContainment(agents.Containment)     {}
func (h *fakeHost) SyncSchedules(context.Context) error   { return nil }

func (h *fakeHost) isRunning(p *namedPlatform) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.running[p]
}

// TestRestartStopsOldAdapter: each reload that restarts a bot stops its
// adapter then running — its Run has returned and Stopped got that adapter
// — before Apply returns, and runs the new one; over several restarts in
// a row only the newest adapter runs.
func TestRestartStopsOldAdapter(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := newFakeHost(ctx)
	defer h.tasks.Wait()
	defer cancel()
	first := &namedPlatform{name: "v0"}
	h.current["team"] = first
	h.StartBot(ctx, "team", first)
	waitStarted(t, h, first)
	prev := first
	for i := 1; i <= 3; i++ {
		next := &namedPlatform{name: "v" + string(rune('0'+i))}
		var stopped []bridges.Platform
		applied := make(chan error, 1)
		go func() {
			applied <- reload.Apply(ctx, h, reload.Reload{
				Diff:    config.Diff{BotsRestarted: []string{"team"}},
				Started: map[string]bridges.Platform{"team": next},
				Stopped: func(bot string, p bridges.Platform) {
					if bot == "team" {
						stopped = append(stopped, p)
					}
				},
			})
		}()
		select {
		case err := <-applied:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("restart %d: Apply did not return in 10 s (the old adapter never stopped)", i)
		}
		if h.isRunning(prev) {
			t.Fatalf("restart %d: the old adapter %s still runs after Apply", i, prev.name)
		}
		if len(stopped) != 1 || stopped[0] != prev {
			t.Fatalf("restart %d: Stopped got %v, want the old adapter %s once", i, stopped, prev.name)
		}
		waitStarted(t, h, next)
		prev = next
	}
}

func waitStarted(t *testing.T, h *fakeHost, p *namedPlatform) {
	t.Helper()
	for {
		select {
		case got := <-h.started:
			if got == p {
				return
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("adapter %s not started in 10 s", p.name)
		}
	}
}
