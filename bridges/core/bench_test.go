package core_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/bridges/features/agenttools"
	"github.com/agentbridge/agentbridge/bridges/features/cards"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/store"
)

// BenchmarkBridgeOverhead measures what the core adds per message: from
// HandleMessage (access check, durable ledger entry) through the worker,
// the write to a scripted fake agent that answers at once, the ledger
// states, usage, the outbox and the post of the reply. Real SQLite in a
// temp dir; the agent and platform cost nothing.
func BenchmarkBridgeOverhead(b *testing.B) {
	for _, convs := range []int{1, 16} {
		b.Run(fmt.Sprintf("conversations=%d", convs), func(b *testing.B) {
			benchOverhead(b, convs)
		})
	}
}

func benchOverhead(b *testing.B, convs int) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(b.TempDir(), "bridge.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	cfg := &config.Config{
		Agents: map[string]*profile.Agent{"coder": {Name: "coder", Command: "claude", Workdir: "/srv/project", MaxLive: convs}},
		Bots:   []*config.Bot{{Name: "bot", Platform: "slack", Agent: "coder", Verbosity: "compact"}},
	}
	lim := defaultLimits()
	lim.EditInterval = time.Hour // no live message: measure the core, not the throttle
	plat := bridgetest.New(lim)
	replies := make(chan string, 1024)
	plat.Observe(func(c bridgetest.Call, m bridgetest.Msg) {
		if c.Op == "post" && strings.HasPrefix(m.Text, "pong: ") {
			replies <- m.Key.Thread
		}
	})
	pool := bridgetest.NewFakePool(nil)
	defer pool.Close()
	cr := core.NewCore(core.CoreOptions{Config: cfg, Store: st, Pool: pool, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Tools: agenttools.New(), Cards: cards.Feature{}})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- cr.Run(runCtx, map[string]bridges.Platform{"bot": plat}) }()
	defer func() { cancel(); <-done }()
	h, err := plat.Handler(ctx)
	if err != nil {
		b.Fatal(err)
	}
	send := func(conv, i int) {
		k := bridges.ConversationKey{Bot: "bot", Channel: "C", Thread: fmt.Sprint(conv)}
		if err := h.HandleMessage(ctx, bridges.Inbound{Key: k, MsgID: fmt.Sprintf("%d-%d", conv, i), UserID: "u", Text: "hi"}); err != nil {
			b.Error(err)
		}
	}
	// Warm up: spawn every conversation's (fake) agent.
	for c := range convs {
		send(c, -1)
		<-replies
	}
	b.ResetTimer()
	var next atomic.Int64
	var wg sync.WaitGroup
	waiting := make([]chan struct{}, convs)
	for c := range convs {
		waiting[c] = make(chan struct{}, 1)
	}
	stop := make(chan struct{})
	routed := make(chan struct{})
	go func() { // route replies to their conversation
		defer close(routed)
		for {
			select {
			case th := <-replies:
				var c int
				fmt.Sscan(th, &c)
				waiting[c] <- struct{}{}
			case <-stop:
				return
			}
		}
	}()
	for c := range convs {
		wg.Go(func() {
			for i := 0; next.Add(1) <= int64(b.N); i++ {
				send(c, i)
				<-waiting[c]
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	close(stop)
	<-routed
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/msg")
}
