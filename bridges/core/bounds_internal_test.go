package core

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/bridges/kits/platformtest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// noAgents is an agents.Pool that never has an agent.
type noAgents struct{}

func (noAgents) Acquire(context.Context, string, pool.Limit, agent.Options) (agents.Session, error) {
	return nil, errors.New("no agents here")
}

func (noAgents) Remove(context.Context, string) error { return nil }

// TestRetiredWorkersReleaseBudgets: once the workers of a channel retire,
// the core holds no budget for it.
func TestRetiredWorkersReleaseBudgets(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := &config.Config{
		Agents: map[string]*profile.Agent{"coder": {Name: "coder", Command: "claude", MaxLive: 1}},
		Bots:   []*config.Bot{{Name: "bot", Platform: "slack", Agent: "coder"}},
	}
	c := NewCore(CoreOptions{Config: cfg, Store: st, Pool: noAgents{}, RetireIdleAfter: 300 * time.Millisecond, Commands: helpOnly{}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, map[string]bridges.Platform{"bot": platformtest.Quiet{}}) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	budgets := func() int {
		return c.budgets.Len()
	}
	testkit.WaitUntil(t, "the core running", 10*time.Second, func() bool {
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
	testkit.WaitUntil(t, "every worker retired", 10*time.Second, func() bool { return c.ActiveConversations() == 0 })
	if n := budgets(); n != 0 {
		t.Errorf("%d channel budgets left after every worker retired", n)
	}
}

// helpOnly stands in for the chat commands (bridges/features/commands, which this
// package's own tests cannot import): "!help" is a command, handled
// without an agent.
type helpOnly struct{}

func (helpOnly) Handle(_ context.Context, _ worker.Conv, _ string, _ worker.Person, text string) bool {
	return text == "!help"
}
