package core

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/schedule/schedreq"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// postRecorder is a quiet platform that records what is posted.
type postRecorder struct {
	quietPlatform
	mu    sync.Mutex
	posts []string
}

func (p *postRecorder) Post(_ context.Context, _ bridges.ConversationKey, m bridges.Message) (bridges.MessageRef, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.posts = append(p.posts, m.Text)
	return bridges.MessageRef{}, nil
}

// TestScheduledRunSameSlotOnce: starting the run of one schedule for the
// same slot twice (as a restart between enqueueing a run and recording it
// does) records one ledger message and announces the run once; another
// slot is a new run.
func TestScheduledRunSameSlotOnce(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := &config.Config{
		Agents: map[string]*config.Agent{"coder": {Name: "coder", Command: "claude", MaxLive: 1}},
		Bots:   []*config.Bot{{Name: "bot", Platform: "slack", Agent: "coder"}},
	}
	c := NewCore(CoreOptions{Config: cfg, Store: st, Pool: noAgents{}})
	plat := &postRecorder{}
	c.platforms = map[string]bridges.Platform{"bot": plat} // not running: runs stay pending in the ledger
	sc, err := st.AddSchedule(ctx, store.Schedule{Source: store.ScheduleFromChat, Name: "daily",
		Key: store.ConversationKey{Bot: "bot", Channel: "C1", Thread: "T1"}, Cron: "0 9 * * *", TZ: "UTC",
		Prompt: "tick", CreatedBy: "alice", ConversationID: "conv"})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	slot := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	first, err := c.startRun(ctx, sc, slot, log)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.startRun(ctx, sc, slot, log)
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Errorf("the same slot started twice gave ledger messages %s and %s, want one", first, again)
	}
	next, err := c.startRun(ctx, sc, slot.Add(24*time.Hour), log)
	if err != nil {
		t.Fatal(err)
	}
	if next == first {
		t.Errorf("the next day's run reused the ledger message %s", first)
	}
	plat.mu.Lock()
	defer plat.mu.Unlock()
	headers := 0
	for _, p := range plat.posts {
		if strings.HasPrefix(p, schedreq.Header+"daily") {
			headers++
		}
	}
	if headers != 2 {
		t.Errorf("%d run headers posted for two slots, want 2: %q", headers, plat.posts)
	}
}
