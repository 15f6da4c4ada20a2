package strangers

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/bridges/kits/platformtest"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestRefusalMemoryBounded: a flood of strangers within the hour never makes
// Notices remember more than MaxRemembered of them; the oldest are forgotten
// (and counted), recent ones are still remembered, and expired ones are
// dropped before anyone is forgotten early.
func TestRefusalMemoryBounded(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	reg := prometheus.NewRegistry()
	c := New(slog.New(slog.DiscardHandler), func() time.Time { return now }, metrics.New(reg))
	ctx := context.Background()
	stranger := func(i int) bridges.Inbound {
		return bridges.Inbound{Key: bridges.ConversationKey{Bot: "bot", Channel: "C", Thread: "T"}, MsgID: fmt.Sprint("m", i), UserID: fmt.Sprint("u", i)}
	}
	remembered := c.Len
	evicted := func() float64 {
		return testkit.CounterValue(t, reg, "agentbridge_memory_evictions_total", map[string]string{"what": evictWhat})
	}

	for i := range MaxRemembered {
		c.Refuse(ctx, platformtest.Quiet{}, stranger(i))
		now = now.Add(time.Millisecond)
	}
	if n := remembered(); n != MaxRemembered {
		t.Fatalf("remembered %d refusals, want %d", n, MaxRemembered)
	}
	c.Refuse(ctx, platformtest.Quiet{}, stranger(MaxRemembered)) // full, nothing expired: the oldest tenth goes
	if n, want := remembered(), MaxRemembered-MaxRemembered/10+1; n != want {
		t.Errorf("after one more: remembered %d, want %d", n, want)
	}
	if got := evicted(); got != MaxRemembered/10 {
		t.Errorf("evictions counted = %v, want %d", got, MaxRemembered/10)
	}
	before := remembered()
	c.Refuse(ctx, platformtest.Quiet{}, stranger(MaxRemembered-1)) // recent: still remembered, not recorded again
	if remembered() != before {
		t.Error("a recently refused user was recorded again")
	}
	c.Refuse(ctx, platformtest.Quiet{}, stranger(0)) // among the oldest: forgotten, so recorded (and told) again
	if remembered() != before+1 {
		t.Error("a forgotten user was not recorded again")
	}

	// An hour later everyone so far has expired: a full map is swept without
	// forgetting anyone early.
	for i := MaxRemembered + 1; remembered() < MaxRemembered; i++ {
		c.Refuse(ctx, platformtest.Quiet{}, stranger(i))
	}
	now = now.Add(Every)
	c.Refuse(ctx, platformtest.Quiet{}, stranger(-1))
	if n := remembered(); n != 1 {
		t.Errorf("after the hour: remembered %d, want only the new one", n)
	}
	if got := evicted(); got != MaxRemembered/10 {
		t.Errorf("expired refusals were counted as evictions: %v", got)
	}
}
