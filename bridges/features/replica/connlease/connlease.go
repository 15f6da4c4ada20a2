// Package connlease holds a bot's platform connection under a lease, so
// that of several replicas of the bridge exactly one connects: the Discord
// gateway of a bot, the WhatsApp linked device. A Gate implements
// bridges.ConnGate on the store's leases (coord.Coordinator.AcquireLease and friends,
// on the database's clock): the holder renews its lease while connected
// and disconnects as soon as it cannot be sure it still holds it; the other
// replicas stand by, try again every poll interval, and connect once the
// holder released the lease (a graceful stop) or it expired (a dead or
// cut-off holder).
//
// Timing, for a lease time L (replicas.lease): the holder renews every
// L/3 and disconnects when no renewal succeeded for L − L/5 — by the
// lease's ValidUntil minus a margin that lets the disconnect finish — so
// it is gone before the database lets another replica in (after L without
// renewal). A standby polls every L/5: it connects within L/5 of a
// graceful stop and within L + L/5 of the holder's death.
package connlease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// Leases are the store's lease primitives a Gate uses (*store.Store).
type Leases interface {
	AcquireLease(ctx context.Context, resource, owner string, ttl time.Duration) (store.Lease, error)
	RenewLease(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error)
	ReleaseLease(ctx context.Context, l store.Lease) error
}

// Resource is the lease name of bot's connection on platform, e.g.
// "platform:discord:team-discord".
func Resource(platform, bot string) string { return "platform:" + platform + ":" + bot }

// BotOf returns the bot whose connection lease resource is (a Resource),
// false for other leases.
func BotOf(resource string) (bot string, ok bool) {
	rest, ok := strings.CutPrefix(resource, "platform:")
	if !ok {
		return "", false
	}
	_, bot, ok = strings.Cut(rest, ":")
	return bot, ok && bot != ""
}

// Options configure a Gate.
type Options struct {
	Leases   Leases
	Resource string        // the lease's name (Resource)
	Owner    string        // this replica's id, unique per process start
	TTL      time.Duration // the lease time (replicas.lease); at least 10ms
	Logger   *slog.Logger  // nil: no logs
	// Release bounds giving the lease up at the end of Hold; 0 = 5 s.
	Release time.Duration
}

// Gate is one bot's connection lease. It implements bridges.ConnGate; Hold
// may run once at a time.
type Gate struct {
	o   Options
	log *slog.Logger
}

var _ bridges.ConnGate = (*Gate)(nil)

// New returns a Gate for o. It checks o and does no I/O.
func New(o Options) (*Gate, error) {
	switch {
	case o.Leases == nil:
		return nil, errors.New("connlease: no store")
	case o.Resource == "" || o.Owner == "":
		return nil, errors.New("connlease: resource and owner must be set")
	case o.TTL < 10*time.Millisecond:
		return nil, fmt.Errorf("connlease: lease time %v, want at least 10ms", o.TTL)
	}
	if o.Release <= 0 {
		o.Release = 5 * time.Second
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Gate{o: o, log: log.With("lease", o.Resource, "replica", o.Owner)}, nil
}

// renewEvery is how often the holder renews.
func (g *Gate) renewEvery() time.Duration { return g.o.TTL / 3 }

// pollEvery is how often a standby tries to take the lease.
func (g *Gate) pollEvery() time.Duration { return g.o.TTL / 5 }

// margin is how long before its lease's ValidUntil the holder starts
// disconnecting, so that it is gone when another replica may connect.
func (g *Gate) margin() time.Duration { return g.o.TTL / 5 }

// errLost: the lease was lost while connect ran (hold).
var errLost = errors.New("connection lease lost")

// Hold implements bridges.ConnGate.
func (g *Gate) Hold(ctx context.Context, h bridges.Handler, connect func(ctx context.Context) error) error {
	var shown string // the standby reason last reported
	for ctx.Err() == nil {
		l, err := g.o.Leases.AcquireLease(ctx, g.o.Resource, g.o.Owner, g.o.TTL)
		if err == nil {
			shown = ""
			g.log.Info("holding the platform connection", "token", l.Token)
			err = g.hold(ctx, l, connect)
			if !errors.Is(err, errLost) {
				return err
			}
			continue // stand by; try again at once (released) or after a poll
		}
		if ctx.Err() != nil {
			break
		}
		reason := g.standbyReason(err)
		if reason != shown {
			shown = reason
			g.log.Info("standing by for the platform connection", "reason", reason)
			bridges.ReportState(h, bridges.BotState{State: bridges.ConnStandby, Reason: reason})
		}
		if !bridges.Sleep(ctx, g.pollEvery()) {
			break
		}
	}
	return nil
}

// standbyReason says, for operators, why AcquireLease refused.
func (g *Gate) standbyReason(err error) string {
	if held, ok := errors.AsType[*store.LeaseHeldError](err); ok {
		return "replica " + held.Holder.Owner + " holds the connection"
	}
	g.log.Warn("could not take the platform connection's lease; retrying", "err", err)
	return "the database cannot be reached to take the connection's lease"
}

// hold runs connect under l until ctx ends (nil), connect returns (its
// error) or the lease is lost (errLost). It releases l on the way out
// unless lost.
func (g *Gate) hold(ctx context.Context, l store.Lease, connect func(context.Context) error) error {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- connect(cctx) }()

	renew := time.NewTicker(g.renewEvery())
	defer renew.Stop()
	deadline := time.NewTimer(time.Until(l.ValidUntil) - g.margin())
	defer deadline.Stop()
	for {
		select {
		case err := <-done:
			g.release(ctx, l)
			if err == nil && ctx.Err() == nil {
				err = errors.New("the connection ended without an error")
			}
			return err
		case <-ctx.Done():
			cancel()
			<-done
			g.release(ctx, l)
			return nil
		case <-deadline.C:
			return g.lose(cancel, done, "no renewal in time (the database did not answer)")
		case <-renew.C:
			nl, err := g.o.Leases.RenewLease(cctx, l, g.o.TTL)
			switch {
			case err == nil:
				l = nl
				deadline.Reset(time.Until(l.ValidUntil) - g.margin())
			case errors.Is(err, store.ErrLeaseLost):
				return g.lose(cancel, done, err.Error())
			case cctx.Err() == nil:
				g.log.Warn("could not renew the platform connection's lease; retrying until it runs out", "err", err,
					"valid_until", l.ValidUntil)
			}
		}
	}
}

// lose ends connect (cancel, then wait for it) after the lease was lost.
func (g *Gate) lose(cancel context.CancelFunc, done <-chan error, why string) error {
	cancel()
	err := <-done
	g.log.Warn("lost the platform connection's lease: disconnected; standing by", "why", why, "connect_err", err)
	return errLost
}

// release gives l up so that a standby connects at once.
func (g *Gate) release(ctx context.Context, l store.Lease) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.o.Release)
	defer cancel()
	if err := g.o.Leases.ReleaseLease(rctx, l); err != nil {
		g.log.Warn("could not release the platform connection's lease: the others take over when it expires", "err", err)
		return
	}
	g.log.Info("released the platform connection")
}
