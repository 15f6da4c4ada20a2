package bridgetest

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/bridges/features/replica/connlease"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// CutLeases is a replica's lease calls (connlease.Leases) that a test can
// cut off, as when the replica dies or loses the database: once Cut is
// set every call fails with ErrLeasesCut, so the lease is neither renewed
// nor released.
type CutLeases struct {
	connlease.Leases
	Cut atomic.Bool
}

// ErrLeasesCut is what the lease calls of a cut CutLeases return.
var ErrLeasesCut = errors.New("bridgetest: lease calls cut by the test (the replica is dead)")

// AcquireLease fails once cut, else asks the leases underneath.
func (c *CutLeases) AcquireLease(ctx context.Context, resource, owner string, ttl time.Duration) (store.Lease, error) {
	if c.Cut.Load() {
		return store.Lease{}, ErrLeasesCut
	}
	return c.Leases.AcquireLease(ctx, resource, owner, ttl)
}

// RenewLease fails once cut, else asks the leases underneath.
func (c *CutLeases) RenewLease(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	if c.Cut.Load() {
		return store.Lease{}, ErrLeasesCut
	}
	return c.Leases.RenewLease(ctx, l, ttl)
}

// ReleaseLease fails once cut, else asks the leases underneath.
func (c *CutLeases) ReleaseLease(ctx context.Context, l store.Lease) error {
	if c.Cut.Load() {
		return ErrLeasesCut
	}
	return c.Leases.ReleaseLease(ctx, l)
}

// GatedPlatform is an adapter that connects only while a connection gate
// lets it (bridges.ConnGated), as the Discord and WhatsApp adapters.
type GatedPlatform interface {
	bridges.Platform
	bridges.ConnGated
}

// ReplicaOptions says which replica RunReplica runs.
type ReplicaOptions struct {
	Owner    string        // the replica's name: the lease owner
	Config   config.Source // the bridge's config, with Bot among its bots
	Store    *store.Store  // the replica's own pool of the shared database; not closed
	Bot      string        // the bot Platform serves
	Platform GatedPlatform // the adapter, not yet run
	Resource string        // the connection lease (connlease.Resource)
	TTL      time.Duration // the lease time
	Logger   *slog.Logger  // nil: no logs
	Script   Script        // the fake agents' script (Pong if nil)
}

// Replica is one bridge replica in the test process: an adapter behind a
// connection gate on leases the test can cut, and a real core (fake
// agents, the real clock) on the replica's own store.
type Replica struct {
	*Core
	Leases *CutLeases
}

// RunReplica runs the replica o describes until Stop or the end of the
// test: it gates o.Platform on a connlease.Gate over o.Store's leases
// (wrapped in CutLeases) and runs a core on the platform as RunCoreOn
// does, with o.Logger and the real clock.
func RunReplica(tb testing.TB, o ReplicaOptions) *Replica {
	tb.Helper()
	r := &Replica{Leases: &CutLeases{Leases: o.Store}}
	g, err := connlease.New(connlease.Options{Leases: r.Leases, Resource: o.Resource, Owner: o.Owner, TTL: o.TTL, Logger: o.Logger})
	if err != nil {
		tb.Fatalf("bridgetest: replica %s: %v", o.Owner, err)
	}
	o.Platform.SetConnGate(g)
	r.Core = &Core{Pool: NewFakePool(o.Script), Store: o.Store}
	r.run(tb, core.CoreOptions{Config: o.Config, Store: o.Store, Pool: r.Pool, Logger: o.Logger}, false,
		map[string]bridges.Platform{o.Bot: o.Platform})
	return r
}

// Stop stops the replica's core (and so its adapter), then closes its
// pool; after a cut the gate cannot release its lease. It fails the test
// when the core's Run failed or did not return within 10 s; a second Stop
// (or the cleanup's) does nothing.
func (r *Replica) Stop() { r.stop() }
