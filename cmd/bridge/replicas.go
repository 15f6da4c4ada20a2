package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/bridges/replica"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
	"github.com/prometheus/client_golang/prometheus"
)

var _ core.Ownership = (*replica.Replica)(nil)

// releaseTimeout bounds handing the leases over at a graceful stop.
const releaseTimeout = 10 * time.Second

// replicas is this process's part in a bridge of several replicas
// (config replicas), or nothing (one bridge: nil *replicas).
type replicas struct {
	r    *replica.Replica
	log  *slog.Logger
	done sync.WaitGroup
}

// newReplicas returns this process's replica when cfg enables replicas,
// else nil.
func newReplicas(cfg *config.Config, st *store.Store, logger *slog.Logger) (*replicas, error) {
	if !cfg.Replicas.Enabled {
		return nil, nil
	}
	r, err := replica.New(replica.Options{Store: st, Lease: cfg.Replicas.Lease, Logger: logger})
	if err != nil {
		return nil, err
	}
	logger.Info("replica: conversations are shared with the other replicas on this database", "replica", r.ID(),
		"lease", cfg.Replicas.Lease)
	return &replicas{r: r, log: logger}, nil
}

// registerer labels every metric of this process with its replica id.
func (rs *replicas) registerer(reg prometheus.Registerer) prometheus.Registerer {
	if rs == nil {
		return reg
	}
	return prometheus.WrapRegistererWith(prometheus.Labels{"replica": rs.r.ID()}, reg)
}

// ownership is the core's Ownership, or nil for one bridge.
func (rs *replicas) ownership() core.Ownership {
	if rs == nil {
		return nil
	}
	return rs.r
}

// claimFiring is the scheduler's claim per firing, or nil for one bridge.
func (rs *replicas) claimFiring() func(context.Context, string) (bool, error) {
	if rs == nil {
		return nil
	}
	return rs.r.ClaimFiring
}

// start runs the replica (leases, signals, polls) until ctx ends.
func (rs *replicas) start(ctx context.Context, c replica.Core) {
	if rs == nil {
		return
	}
	rs.done.Go(func() {
		if err := rs.r.Run(ctx, c); err != nil {
			rs.log.Error("replica stopped", "err", err)
		}
	})
}

// stop waits for the replica to stop and hands its leases over; call it
// after the core stopped (nothing here writes for them any more).
func (rs *replicas) stop(ctx context.Context) {
	if rs == nil {
		return
	}
	rs.done.Wait()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	rs.r.Release(ctx)
}

// health is /healthz's view of the replica, or nil for one bridge.
func (rs *replicas) health() func() *healthReplica {
	if rs == nil {
		return nil
	}
	return func() *healthReplica {
		return &healthReplica{ID: rs.r.ID(), Conversations: rs.r.Held()}
	}
}

// healthReplica is /healthz's replica section: this process's owner id
// and the conversations whose leases it holds.
type healthReplica struct {
	ID            string   `json:"id"`
	Conversations []string `json:"conversations"`
}

// id is this process's replica id: the lease owner with config replicas,
// else hostname-pid (replica_config.go).
func (rs *replicas) id() string {
	if rs == nil {
		return replicaID()
	}
	return rs.r.ID()
}
