package core

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/platformtest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/store"
)

// resumeRecorder is a Resumer that records the conversations it is asked
// to resume ahead of their return.
type resumeRecorder struct {
	noAgents
	mu      sync.Mutex
	resumed []string
}

func (r *resumeRecorder) WarmResume(_ context.Context, key string, _ pool.Limit, _ agent.Options, _ bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resumed = append(r.resumed, key)
	return nil
}

// TestWarmResumeSkipsDeletedWebConversations: after a restart, recently
// active web conversations are resumed ahead of their return, except the
// deleted ones (their session may be kept for !resume, but nobody can
// write in them any more).
func TestWarmResumeSkipsDeletedWebConversations(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := &config.Config{
		Agents: map[string]*profile.Agent{"coder": {Name: "coder", Command: "claude", MaxLive: 4, IdleTimeout: 10 * time.Minute}},
		Bots:   []*config.Bot{{Name: "console", Platform: config.PlatformWeb, Agent: "coder"}},
	}
	ids := map[string]string{}
	for _, thread := range []string{"kept0001", "deleted1"} {
		key := store.ConversationKey{Bot: "console", Channel: "ana", Thread: thread}
		conv, _, err := st.GetOrCreateConversation(ctx, key, "coder", "ana")
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SetSessionID(ctx, conv.ID, "session-"+thread); err != nil {
			t.Fatal(err)
		}
		if _, err := st.AddWebMessage(ctx, store.WebMessage{ID: "m-" + thread, Key: key, Author: "ana", Text: "hello"}); err != nil {
			t.Fatal(err)
		}
		ids[thread] = conv.ID
	}
	if err := st.DeleteWebThread(ctx, "console", "deleted1"); err != nil {
		t.Fatal(err)
	}
	rec := &resumeRecorder{}
	c := NewCore(CoreOptions{Config: cfg, Store: st, Pool: rec})
	c.warmResumeRecent(ctx, map[string]bridges.Platform{"console": platformtest.Quiet{}})
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !slices.Contains(rec.resumed, ids["kept0001"]) {
		t.Errorf("the live web conversation was not resumed ahead of its return (resumed %v)", rec.resumed)
	}
	if slices.Contains(rec.resumed, ids["deleted1"]) {
		t.Errorf("the deleted web conversation was resumed ahead of its return (resumed %v)", rec.resumed)
	}
}
