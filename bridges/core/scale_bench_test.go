package core_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/features/agenttools"
	"github.com/agentbridge/agentbridge/bridges/features/cards"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/store"
)

// BenchmarkIdleConversations measures what an idle conversation costs the
// bridge: each op is one new conversation (a message, the light scripted
// agent's answer posted), and the metrics are the growth of the process's
// goroutines, resident memory and live heap per conversation once all b.N
// conversations are idle. "sessions=live" keeps every conversation's (light)
// agent session, "max_live=32" keeps 32 and stops the rest like the pool's
// eviction does; the workers of idle conversations stay until
// RetireIdleAfter (10 minutes by default).
//
// Run: go test ./bridges -run '^$' -bench IdleConversations -benchtime 2000x
func BenchmarkIdleConversations(b *testing.B) {
	for _, maxLive := range []int{0, 32} {
		name := "sessions=live"
		if maxLive > 0 {
			name = fmt.Sprintf("max_live=%d", maxLive)
		}
		b.Run(name, func(b *testing.B) { benchIdleConversations(b, maxLive) })
	}
}

func benchIdleConversations(b *testing.B, maxLive int) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(b.TempDir(), "bridge.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	cfg := &config.Config{
		Agents: map[string]*profile.Agent{"coder": {Name: "coder", Command: "claude", Workdir: "/srv/project", MaxLive: max(maxLive, 1)}},
		Bots:   []*config.Bot{{Name: "bot", Platform: "slack", Agent: "coder", Verbosity: "compact"}},
	}
	lim := defaultLimits()
	lim.EditInterval = time.Hour // answers are posted whole
	plat := bridgetest.New(lim)
	var answered sync.WaitGroup
	plat.Observe(func(c bridgetest.Call, m bridgetest.Msg) {
		if c.Op == "post" && strings.HasPrefix(m.Text, "pong: ") {
			answered.Done()
		}
	})
	pool := newLightPool(maxLive)
	logw := io.Discard
	if os.Getenv("BENCHLOG") != "" {
		logw = os.Stderr
	}
	cr := core.NewCore(core.CoreOptions{Config: cfg, Store: st, Pool: pool, Logger: slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn})), Tools: agenttools.New(), Cards: cards.Feature{}})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- cr.Run(runCtx, map[string]bridges.Platform{"bot": plat}) }()
	defer func() { cancel(); <-done; pool.close() }()
	h, err := plat.Handler(ctx)
	if err != nil {
		b.Fatal(err)
	}

	g0, rss0, heap0 := footprint(b)
	conv := 0
	for b.Loop() { // b.N is known only after the loop
		answered.Add(1)
		k := bridges.ConversationKey{Bot: "bot", Channel: fmt.Sprint("C", conv%50), Thread: fmt.Sprint(conv)}
		if err := h.HandleMessage(ctx, bridges.Inbound{Key: k, MsgID: fmt.Sprint(conv), UserID: "u", Text: "hi"}); err != nil {
			b.Fatal(err)
		}
		conv++
	}
	answered.Wait()
	b.StopTimer()
	if n := cr.ActiveConversations(); n != b.N {
		b.Fatalf("%d conversation workers for %d conversations", n, b.N)
	}
	g1, rss1, heap1 := footprint(b)
	n := float64(b.N)
	b.ReportMetric(float64(g1-g0)/n, "goroutines/conv")
	b.ReportMetric(float64(rss1-rss0)/1024/n, "KB-RSS/conv")
	b.ReportMetric(float64(heap1-heap0)/1024/n, "KB-heap/conv")
	b.ReportMetric(float64(rss1)/(1<<20), "MB-RSS-total")
}

// footprint returns the goroutines, resident bytes and live heap bytes of
// the process after a full garbage collection.
func footprint(b *testing.B) (goroutines int, rss, heap uint64) {
	b.Helper()
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	statm, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		b.Skipf("no /proc/self/statm: %v", err)
	}
	f := strings.Fields(string(statm))
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return runtime.NumGoroutine(), pages * uint64(os.Getpagesize()), ms.HeapInuse
}

// lightPool is a agents.Pool of sessions that answer at once, with no
// goroutine and small buffers of their own, so the benchmark measures the
// bridge. With maxLive > 0 it stops the least recently acquired session
// beyond maxLive (an expected "evicted" exit), as pool.Pool does with idle
// sessions.
type lightPool struct {
	maxLive int
	mu      sync.Mutex
	live    map[string]*lightSession
	order   []string // keys, least recently acquired first
}

func newLightPool(maxLive int) *lightPool {
	return &lightPool{maxLive: maxLive, live: map[string]*lightSession{}}
}

func (p *lightPool) Acquire(_ context.Context, key string, _ pool.Limit, opts agent.Options) (agents.Session, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.live[key]; s != nil {
		return s, nil
	}
	for p.maxLive > 0 && len(p.order) >= p.maxLive {
		victim := p.order[0]
		p.order = p.order[1:]
		p.live[victim].exit("evicted")
		delete(p.live, victim)
	}
	s := &lightSession{id: opts.SessionID, events: make(chan streamjson.Event, 8)}
	p.live[key] = s
	p.order = append(p.order, key)
	return s, nil
}

func (p *lightPool) Remove(_ context.Context, key string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.live[key]; s != nil {
		s.exit("closed")
		delete(p.live, key)
	}
	return nil
}

func (p *lightPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, s := range p.live {
		s.exit("closed")
		delete(p.live, k)
	}
}

// lightSession answers each message with its receipts and a result.
type lightSession struct {
	id     string
	mu     sync.Mutex
	events chan streamjson.Event
	closed bool
}

func (s *lightSession) Send(_ context.Context, m streamjson.UserMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return agent.ErrClosed
	}
	text := "pong: " + m.Text
	for _, ev := range []streamjson.Event{
		streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted},
		streamjson.Init{SessionID: s.id},
		streamjson.AssistantText{Text: text},
		streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleCompleted},
		streamjson.Result{Subtype: "success", Text: text, SessionID: s.id, CostUSD: 0.001, NumTurns: 1},
	} {
		s.events <- ev // the core's reader drains them; 8 fit
	}
	return nil
}

func (s *lightSession) exit(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.events <- streamjson.Exit{Expected: true, Reason: reason}
		close(s.events)
	}
}

func (s *lightSession) Respond(context.Context, string, streamjson.Decision) error { return nil }
func (s *lightSession) Interrupt(context.Context) error                            { return nil }
func (s *lightSession) SetModel(context.Context, string) error                     { return nil }
func (s *lightSession) SetPermissionMode(context.Context, string) error            { return nil }
func (s *lightSession) Events() <-chan streamjson.Event                            { return s.events }
