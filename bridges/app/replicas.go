package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/web"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/admin"
	"github.com/agentbridge/agentbridge/bridges/app/healthz"
	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/bridges/features/replica"
	"github.com/agentbridge/agentbridge/bridges/features/replica/connlease"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
	"github.com/prometheus/client_golang/prometheus"
)

var (
	_ ownership.Ownership    = (*replica.Replica)(nil)
	_ ownership.BackSignaler = (*replica.Replica)(nil) // a platform's return seen by one replica wakes the replies waiting on another
)

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
	r, err := replica.New(replica.Options{Store: st, Lease: cfg.Replicas.Lease, Logger: logger, Pin: devicePin})
	if err != nil {
		return nil, err
	}
	logger.Info("replica: conversations are shared with the other replicas on this database", "replica", r.ID(),
		"lease", cfg.Replicas.Lease)
	return &replicas{r: r, log: logger}, nil
}

// devicePin is the lease a bot's conversations follow (replica.Options.Pin):
// a WhatsApp bot sends through its linked device only, so its conversations
// run on the replica holding the device's lease (connleases.go). Other bots
// have no lease of that name, so it never binds them; it needs no config,
// so a WhatsApp bot a reload adds follows its device too.
func devicePin(bot string) string { return connlease.Resource("whatsapp", bot) }

// registerer labels every metric of this process with its replica id.
func (rs *replicas) registerer(reg prometheus.Registerer) prometheus.Registerer {
	if rs == nil {
		return reg
	}
	return prometheus.WrapRegistererWith(prometheus.Labels{"replica": rs.r.ID()}, reg)
}

// ownership is the core's Ownership, or nil for one bridge.
func (rs *replicas) ownership() ownership.Ownership {
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

// drainer is what a graceful stop needs of the core (*core.Core).
type drainer interface {
	// Drain stops new work for the agents and waits for running turns
	// until ctx ends.
	Drain(ctx context.Context)
}

// coreContext returns the context the core and the replica run under. For
// one bridge it is ctx. With replicas it ends after ctx: once ctx ended
// (SIGTERM), the replica takes no new conversation and the core finishes
// its running turns and posts their answers — for at most grace — before
// the core stops and the leases are handed over (stop), so a rolling
// update interrupts no turn that ends within grace.
func (rs *replicas) coreContext(ctx context.Context, c drainer, grace time.Duration) context.Context {
	if rs == nil {
		return ctx
	}
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	rs.done.Go(func() {
		defer cancel()
		<-ctx.Done() // run cancels ctx on its way out, whatever ended it
		started := time.Now()
		rs.r.Stopping()
		rs.log.Info("graceful stop: finishing the running turns before handing the conversations over", "grace", grace)
		dctx, stop := context.WithTimeout(cctx, grace)
		defer stop()
		c.Drain(dctx)
		rs.log.Info("graceful stop: turns finished", "after", time.Since(started).Round(time.Millisecond))
	})
	return cctx
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

// fanOutWeb shares the web console's live updates with the consoles of
// the other replicas, and relays theirs, until ctx ends (web.Console.Fanout);
// nothing for one bridge or without a console. Run it under the core's
// context: the answers a graceful stop still posts reach every page.
func (rs *replicas) fanOutWeb(ctx context.Context, console *web.Console, st *store.Store) {
	if rs == nil || console == nil {
		return
	}
	rs.done.Go(func() {
		if err := console.Fanout(ctx, st, rs.r.ID()); err != nil {
			rs.log.Error("web console: live updates are not shared with the other replicas; pages show other replicas' answers on reload", "err", err)
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
func (rs *replicas) health() func() *healthz.Replica {
	if rs == nil {
		return nil
	}
	return func() *healthz.Replica {
		return &healthz.Replica{ID: rs.r.ID(), Conversations: rs.r.Held()}
	}
}

// operatorView is the web operator view's replica status (bots page), or
// nil for one bridge: this replica, the conversations it holds, and from
// the leases table who holds each bot's platform connection.
func (rs *replicas) operatorView(st *store.Store) func(context.Context) (admin.ReplicaStatus, error) {
	if rs == nil {
		return nil
	}
	return func(ctx context.Context) (admin.ReplicaStatus, error) {
		s := admin.ReplicaStatus{ID: rs.r.ID(), Conversations: rs.r.Held(), Connections: map[string]string{}}
		ls, err := st.Leases(ctx, "")
		if err != nil {
			return s, fmt.Errorf("connection leases: %w", err)
		}
		for _, l := range ls {
			if bot, ok := connlease.BotOf(l.Resource); ok {
				s.Connections[bot] = l.Owner
			}
		}
		return s, nil
	}
}

// id is this process's replica id: the lease owner with config replicas,
// else hostname-pid (replica_config.go).
func (rs *replicas) id() string {
	if rs == nil {
		return replicaID()
	}
	return rs.r.ID()
}
