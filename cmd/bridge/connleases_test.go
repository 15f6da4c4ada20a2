package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/connlease"
	"github.com/agentbridge/agentbridge/bridges/whatsapp"
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

// whatsapp-link into PostgreSQL keeps every bridge off the device: it is
// refused while a replica holds the device's connection lease, and while
// it links no replica can take the device.
func TestLinkHoldsTheDevice(t *testing.T) {
	srv := needPostgres(t)
	ctx := t.Context()
	cfg := &config.Config{Store: config.Store{Driver: config.StorePostgres, DSN: srv.NewDatabase(t, "")}}
	logger := slog.New(slog.DiscardHandler)
	st, err := openStore(ctx, cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	resource := connlease.Resource(whatsapp.Name, "phone")

	l, err := st.AcquireLease(ctx, resource, "replica-1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holdDeviceForLink(ctx, cfg, "phone", time.Minute, logger); !errors.Is(err, store.ErrLeaseHeld) ||
		!strings.Contains(err.Error(), "stop every replica first") {
		t.Fatalf("link while a replica holds the device: %v", err)
	}
	if err := st.ReleaseLease(ctx, l); err != nil {
		t.Fatal(err)
	}

	release, err := holdDeviceForLink(ctx, cfg, "phone", time.Minute, logger)
	if err != nil {
		t.Fatalf("link with no replica connected: %v", err)
	}
	if _, err := st.AcquireLease(ctx, resource, "replica-1", time.Minute); !errors.Is(err, store.ErrLeaseHeld) {
		t.Errorf("a replica took the device while it was being linked: %v", err)
	}
	release()
	if _, err := st.AcquireLease(ctx, resource, "replica-1", time.Minute); err != nil {
		t.Errorf("the device stays held after linking: %v", err)
	}
}
