package schedule

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/schedules"
	"github.com/agentbridge/agentbridge/store"
)

// The scheduler's behaviour through the core (firing, catch-up, overlap,
// retries) is tested in bridges/core (scheduler_test.go and others); here
// what is its own.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRunEndsWithItsContext: Run returns when its context ends, Wake never
// blocks (also with nobody running), and nothing keeps running after.
func TestRunEndsWithItsContext(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := New(Options{Config: &config.Config{}, Store: st})
	s.Wake()
	s.Wake() // a second pending wake-up is dropped, not blocked on
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx, nil); close(done) }()
	s.Wake()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

// TestLatestDue: of several due firings only the latest runs, and none
// from before the scan window.
func TestLatestDue(t *testing.T) {
	cr, err := schedules.ParseCron("0 9 * * *", "UTC")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		base, want time.Time
	}{
		{now.Add(-time.Hour), time.Time{}},                                      // 09:00 today is before base
		{now.Add(-4 * time.Hour), time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)}, // today's
		{now.AddDate(0, 0, -3), time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)},   // three missed: the latest
		{now.AddDate(-1, 0, 0), time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)},   // a year down: still only the latest
	} {
		if got := latestDue(cr, tc.base, now); !got.Equal(tc.want) {
			t.Errorf("latestDue(base %v) = %v, want %v", tc.base, got, tc.want)
		}
	}
}
