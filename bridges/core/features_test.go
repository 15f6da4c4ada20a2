package core_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// runRecorder is an adapter that says whether its Run is running.
type runRecorder struct {
	*bridgetest.Platform
	running atomic.Bool
	runs    atomic.Int32
}

func (p *runRecorder) Run(ctx context.Context, h bridges.Handler) error {
	p.runs.Add(1)
	p.running.Store(true)
	defer p.running.Store(false)
	return p.Platform.Run(ctx, h)
}

// TestStopBotEndsItsAdapterRun: StopBot cancels the run of that bot's
// adapter and returns only once its Run has returned (a reload then
// releases the adapter: it must not be in use); StartBot runs another
// adapter for the bot, which StopBot stops in turn; a bot not running is
// reported as such.
func TestStopBotEndsItsAdapterRun(t *testing.T) {
	first := &runRecorder{}
	h := start(t, setup{wrap: func(p *bridgetest.Platform) bridges.Platform { first.Platform = p; return first }})
	testkit.WaitUntil(t, "the first adapter runs", 10*time.Second, first.running.Load)

	stopWithin := func(what string) {
		t.Helper()
		stopped := make(chan bool, 1)
		go func() { stopped <- h.core.StopBot("bot") }()
		select {
		case ok := <-stopped:
			if !ok {
				t.Fatalf("StopBot of %s: the bot was not running", what)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("StopBot of %s did not return in 10 s (its run not cancelled)", what)
		}
	}
	stopWithin("the first adapter")
	if first.running.Load() {
		t.Fatal("StopBot returned while the first adapter's Run still ran")
	}

	second := &runRecorder{Platform: bridgetest.New(defaultLimits())}
	h.core.StartBot(context.Background(), "bot", second)
	testkit.WaitUntil(t, "the second adapter runs", 10*time.Second, second.running.Load)
	stopWithin("the second adapter")
	if second.running.Load() || first.runs.Load() != 1 {
		t.Fatalf("after the second stop: second running %v, first ran %d times", second.running.Load(), first.runs.Load())
	}
	if h.core.StopBot("bot") {
		t.Error("StopBot of a bot no longer running reported it running")
	}
}

// blockingSync is a scheduler whose Sync waits until its context ends.
type blockingSync struct {
	core.Scheduler
	syncing chan struct{}
}

func (b blockingSync) Sync(ctx context.Context) error {
	close(b.syncing)
	<-ctx.Done()
	return fmt.Errorf("read config schedules: %w", ctx.Err())
}

// TestRunStoppedWhileStartingIsNoFailure: a core stopped while it is
// still starting (here: storing the config's schedules) returns nil, as
// for any end of its context; a failure of a start-up step is for a
// context still running.
func TestRunStoppedWhileStartingIsNoFailure(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	cfg := &config.Config{DataDir: t.TempDir(),
		Agents: map[string]*profile.Agent{"coder": {Name: "coder", Command: "claude", Workdir: t.TempDir(), MaxLive: 1,
			IdleTimeout: time.Minute, ApprovalTimeout: time.Minute, PermissionMode: "default"}},
		Bots: []*config.Bot{{Name: "bot", Platform: "slack", Agent: "coder", Verbosity: "compact"}}}
	pool := bridgetest.NewFakePool(nil)
	t.Cleanup(pool.Close)
	sched := blockingSync{syncing: make(chan struct{})}
	c := core.NewCore(core.CoreOptions{Config: cfg, Store: st, Pool: pool, Scheduler: sched})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, map[string]bridges.Platform{"bot": bridgetest.New(defaultLimits())}) }()
	<-sched.syncing
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run stopped while starting = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return within 10 s of its context ending")
	}
}
