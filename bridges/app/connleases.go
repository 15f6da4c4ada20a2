package app

import (
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/features/replica/connlease"
	"github.com/agentbridge/agentbridge/config"
)

// replicaConns is what the platform connections need to know of the
// replicas this bridge is one of (config replicas).
type replicaConns struct {
	enabled bool          // several replicas share the PostgreSQL store
	id      string        // this replica, unique per process start
	lease   time.Duration // replicas.lease
}

// leaseConnections makes the adapters whose platform allows one
// connection per bot (bridges.ConnGated: the Discord gateway, the
// WhatsApp linked device) hold it under a lease, so that of the replicas
// exactly one connects and the others stand by (bridges/features/replica/connlease). It
// applies to platforms (by bot name, of cfg) and to the adapters the
// set opens later (reloads). Without replicas it does nothing: one
// bridge connects at once, as always. Call it before the core runs.
func (bs *botSet) leaseConnections(cfg *config.Config, platforms map[string]bridges.Platform, leases connlease.Leases, rc replicaConns) error {
	if !rc.enabled {
		return nil
	}
	gate := func(b *config.Bot) (bridges.ConnGate, error) {
		return connlease.New(connlease.Options{Leases: leases, Resource: connlease.Resource(b.Platform, b.Name),
			Owner: rc.id, TTL: rc.lease, Logger: bs.logger.With("bot", b.Name)})
	}
	bs.mu.Lock()
	bs.gate = gate
	bs.mu.Unlock()
	for name, p := range platforms {
		b := cfg.Bot(name)
		if b == nil {
			continue
		}
		if err := setGate(p, b, gate); err != nil {
			return err
		}
	}
	return nil
}

// setGate gives p, when it is ConnGated, a gate for bot b.
func setGate(p bridges.Platform, b *config.Bot, gate func(*config.Bot) (bridges.ConnGate, error)) error {
	g, ok := p.(bridges.ConnGated)
	if !ok || gate == nil {
		return nil
	}
	cg, err := gate(b)
	if err != nil {
		return fmt.Errorf("bot %q: connection lease: %w", b.Name, err)
	}
	g.SetConnGate(cg)
	return nil
}
