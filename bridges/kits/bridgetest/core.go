package bridgetest

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/app/assemble"
	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// Core is a real core.Core, with the features every bridge has
// (bridges/app/assemble), run by RunCore for adapter tests.
type Core struct {
	*core.Core
	Pool  *FakePool
	Clock *FakeClock // nil in a Replica: the core runs on the real clock
	Store *store.Store

	stop func() // stops the core once (run)
}

// RunCore runs a real core until the test ends: cfg as given (a
// *config.Config, or a *config.Live a test reloads), a SQLite
// store in tb.TempDir(), a FakePool playing script (Pong if nil), a
// FakeClock set to a fixed date, and platforms keyed by bot name (adapters
// under test, whose Run the core calls). The cleanup stops the core, then
// closes the pool and the store, and fails the test when Run failed.
func RunCore(tb testing.TB, cfg config.Source, platforms map[string]bridges.Platform, script Script) *Core {
	tb.Helper()
	st, err := store.Open(context.Background(), filepath.Join(tb.TempDir(), "bridge.db"), nil)
	if err != nil {
		tb.Fatalf("bridgetest: open store: %v", err)
	}
	return runCore(tb, cfg, st, true, platforms, script)
}

// RunCoreOn is RunCore on the caller's store (which it does not close),
// for an adapter that shares the bridge's database with the core, as the
// web console does.
func RunCoreOn(tb testing.TB, cfg config.Source, st *store.Store, platforms map[string]bridges.Platform, script Script) *Core {
	tb.Helper()
	return runCore(tb, cfg, st, false, platforms, script)
}

func runCore(tb testing.TB, cfg config.Source, st *store.Store, closeStore bool, platforms map[string]bridges.Platform, script Script) *Core {
	c := &Core{
		Pool:  NewFakePool(script),
		Clock: NewFakeClock(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)),
		Store: st,
	}
	c.run(tb, core.CoreOptions{Config: cfg, Store: st, Pool: c.Pool, Clock: c.Clock}, closeStore, platforms)
	return c
}

// run assembles the core from o (with c's pool) and runs it on platforms
// until c.stop, which the test's cleanup calls: it stops the core, then
// closes the pool and, with closeStore, the store, and fails the test when
// Run failed or did not return within 10 s.
func (c *Core) run(tb testing.TB, o core.CoreOptions, closeStore bool, platforms map[string]bridges.Platform) {
	c.Core = assemble.Core(o, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, platforms) }()
	var once sync.Once
	c.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					tb.Errorf("bridgetest: core Run: %v", err)
				}
			case <-time.After(10 * time.Second):
				tb.Error("bridgetest: core did not stop")
			}
			c.Pool.Close()
			c.WaitSessionReaders()
			if !closeStore {
				return
			}
			if err := o.Store.Close(); err != nil {
				tb.Errorf("bridgetest: close store: %v", err)
			}
		})
	}
	tb.Cleanup(c.stop)
}
