package app

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// gatedPlatform is a platform that allows one connection per bot.
type gatedPlatform struct {
	bridges.Platform
	gate bridges.ConnGate
}

func (p *gatedPlatform) SetConnGate(g bridges.ConnGate) { p.gate = g }

// plainPlatform is a platform where every replica connects (Slack).
type plainPlatform struct{ bridges.Platform }

// noLeases is a lease store that must not be called while wiring.
type noLeases struct{ t *testing.T }

func (n noLeases) AcquireLease(context.Context, string, string, time.Duration) (store.Lease, error) {
	n.t.Error("AcquireLease called while wiring")
	return store.Lease{}, nil
}

func (n noLeases) RenewLease(context.Context, store.Lease, time.Duration) (store.Lease, error) {
	n.t.Error("RenewLease called while wiring")
	return store.Lease{}, nil
}

func (n noLeases) ReleaseLease(context.Context, store.Lease) error {
	n.t.Error("ReleaseLease called while wiring")
	return nil
}

// With replicas, the adapters that allow one connection get a gate (and
// nothing else does); without, none does.
func TestLeaseConnections(t *testing.T) {
	t.Parallel()
	cfg := &config.Config{Bots: []*config.Bot{{Name: "guild", Platform: "discord"}, {Name: "team", Platform: "slack"}}}
	for _, enabled := range []bool{false, true} {
		gated, plain := &gatedPlatform{}, &plainPlatform{}
		bs := &botSet{logger: slog.New(slog.DiscardHandler), release: map[bridges.Platform]func(){}}
		rc := replicaConns{enabled: enabled, id: "replica-1", lease: 15 * time.Second}
		if err := bs.leaseConnections(cfg, map[string]bridges.Platform{"guild": gated, "team": plain}, noLeases{t}, rc); err != nil {
			t.Fatal(err)
		}
		if got := gated.gate != nil; got != enabled {
			t.Errorf("replicas %v: the Discord bot got a gate: %v", enabled, got)
		}
		if got := bs.gate != nil; got != enabled {
			t.Errorf("replicas %v: bots opened later get gates: %v", enabled, got)
		}
	}
}
