package app

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// TestPrunerFollowsRetention: a reload that changes retention restarts
// the retention pass with the new value (turning it on from off here).
func TestPrunerFollowsRetention(t *testing.T) {
	t.Parallel()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	live := config.NewLive(&config.Config{}, time.Now()) // retention 0: off
	var mu sync.Mutex
	var got []time.Duration
	changed := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		runPruner(ctx, live, changed, func(r time.Duration) store.Pruner {
			mu.Lock()
			got = append(got, r)
			mu.Unlock()
			return store.Pruner{Store: st, Retention: r}
		})
	}()
	seen := func(n int) []time.Duration {
		t.Helper()
		var g []time.Duration
		testkit.WaitUntil(t, fmt.Sprintf("the pruner to start %d times", n), 5*time.Second, func() bool {
			mu.Lock()
			g = append([]time.Duration(nil), got...)
			mu.Unlock()
			return len(g) >= n
		})
		return g
	}
	seen(1)
	live.Set(&config.Config{Retention: 48 * time.Hour}, time.Now(), "test")
	changed <- struct{}{}
	if g := seen(2); g[0] != 0 || g[1] != 48*time.Hour {
		t.Fatalf("retentions the pass ran with: %v, want [0 48h]", g)
	}
	cancel()
	<-done
}
