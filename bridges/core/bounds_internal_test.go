package core

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// manualClock is a Clock that moves only when told; its timers never fire.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func (c *manualClock) AfterFunc(time.Duration, func()) Timer { return stoppedTimer{} }

type stoppedTimer struct{}

func (stoppedTimer) Stop() bool { return true }

// quietPlatform accepts posts and edits and does nothing else.
type quietPlatform struct{}

func (quietPlatform) Limits() bridges.Limits { return bridges.Limits{} }

func (quietPlatform) Run(ctx context.Context, _ bridges.Handler) error {
	<-ctx.Done()
	return nil
}

func (quietPlatform) Post(context.Context, bridges.ConversationKey, bridges.Message) (bridges.MessageRef, error) {
	return bridges.MessageRef{}, nil
}

func (quietPlatform) Edit(context.Context, bridges.MessageRef, bridges.Message) error { return nil }

// noAgents is an AgentPool that never has an agent.
type noAgents struct{}

func (noAgents) Acquire(context.Context, string, pool.Limit, agent.Options) (AgentSession, error) {
	return nil, errors.New("no agents here")
}

func (noAgents) Remove(context.Context, string) error { return nil }

// TestRefusalMemoryBounded: a flood of strangers within the hour never makes
// the core remember more than maxRefusals of them; the oldest are forgotten
// (and counted), recent ones are still remembered, and expired ones are
// dropped before anyone is forgotten early.
func TestRefusalMemoryBounded(t *testing.T) {
	clock := &manualClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	reg := prometheus.NewRegistry()
	cfg := &config.Config{Bots: []*config.Bot{{Name: "bot", Platform: "slack", Agent: "coder"}}}
	c := NewCore(CoreOptions{Config: cfg, Clock: clock, Metrics: NewMetrics(reg)})
	c.platforms = map[string]bridges.Platform{"bot": quietPlatform{}}
	ctx := context.Background()
	stranger := func(i int) bridges.Inbound {
		return bridges.Inbound{Key: bridges.ConversationKey{Bot: "bot", Channel: "C", Thread: "T"}, MsgID: fmt.Sprint("m", i), UserID: fmt.Sprint("u", i)}
	}
	remembered := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.refused)
	}
	evicted := func() float64 { return counterValue(t, reg, "agentbridge_memory_evictions_total", evictRefusals) }

	for i := range maxRefusals {
		c.refuse(ctx, stranger(i))
		clock.advance(time.Millisecond)
	}
	if n := remembered(); n != maxRefusals {
		t.Fatalf("remembered %d refusals, want %d", n, maxRefusals)
	}
	c.refuse(ctx, stranger(maxRefusals)) // full, nothing expired: the oldest tenth goes
	if n, want := remembered(), maxRefusals-maxRefusals/10+1; n != want {
		t.Errorf("after one more: remembered %d, want %d", n, want)
	}
	if got := evicted(); got != maxRefusals/10 {
		t.Errorf("evictions counted = %v, want %d", got, maxRefusals/10)
	}
	before := remembered()
	c.refuse(ctx, stranger(maxRefusals-1)) // recent: still remembered, not recorded again
	if remembered() != before {
		t.Error("a recently refused user was recorded again")
	}
	c.refuse(ctx, stranger(0)) // among the oldest: forgotten, so recorded (and told) again
	if remembered() != before+1 {
		t.Error("a forgotten user was not recorded again")
	}

	// An hour later everyone so far has expired: a full map is swept without
	// forgetting anyone early.
	for i := maxRefusals + 1; remembered() < maxRefusals; i++ {
		c.refuse(ctx, stranger(i))
	}
	clock.advance(refusalEvery)
	c.refuse(ctx, stranger(-1))
	if n := remembered(); n != 1 {
		t.Errorf("after the hour: remembered %d, want only the new one", n)
	}
	if got := evicted(); got != maxRefusals/10 {
		t.Errorf("expired refusals were counted as evictions: %v", got)
	}
}

// TestRetiredWorkersReleaseBudgets: once the workers of a channel retire,
// the core holds no budget for it.
func TestRetiredWorkersReleaseBudgets(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := &config.Config{
		Agents: map[string]*config.Agent{"coder": {Name: "coder", Command: "claude", MaxLive: 1}},
		Bots:   []*config.Bot{{Name: "bot", Platform: "slack", Agent: "coder"}},
	}
	c := NewCore(CoreOptions{Config: cfg, Store: st, Pool: noAgents{}, RetireIdleAfter: 300 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, map[string]bridges.Platform{"bot": quietPlatform{}}) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	budgets := func() int {
		return c.budgets.Len()
	}
	waitUntil(t, "the core running", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.running
	})
	for i, thread := range []string{"1", "2", "3"} { // two threads of one channel, one of another
		key := bridges.ConversationKey{Bot: "bot", Channel: "C", Thread: thread}
		if i == 2 {
			key.Channel = "D"
		}
		if err := c.HandleMessage(ctx, bridges.Inbound{Key: key, MsgID: "m" + thread, UserID: "U1", Text: "!help"}); err != nil {
			t.Fatal(err)
		}
	}
	if n, b := c.ActiveConversations(), budgets(); n != 3 || b != 2 {
		t.Fatalf("%d workers with %d budgets, want 3 workers sharing 2", n, b)
	}
	waitUntil(t, "every worker retired", func() bool { return c.ActiveConversations() == 0 })
	if n := budgets(); n != 0 {
		t.Errorf("%d channel budgets left after every worker retired", n)
	}
}

// waitUntil polls cond for up to 10 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// counterValue reads the counter name of reg whose only label has the
// value label (0 if there is none).
func counterValue(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if ls := m.GetLabel(); len(ls) == 1 && ls[0].GetValue() == label {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
