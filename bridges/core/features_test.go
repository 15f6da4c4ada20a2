package core_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/internal/testkit"
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
