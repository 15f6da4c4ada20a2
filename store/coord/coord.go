// Package coord holds the primitives replicas of the bridge coordinate
// with on one database: leases with fencing tokens (leases.go) and signals
// (Notify/Listen: LISTEN/NOTIFY on PostgreSQL, in process on SQLite;
// signals.go). It owns the leases table; signals use no table.
package coord

import (
	"errors"

	"github.com/agentbridge/agentbridge/store/sqldb"
)

// Errors of leases. Methods wrap them with context; test with errors.Is.
var (
	// ErrLeaseHeld: another owner holds the lease (AcquireLease); the
	// error is a *LeaseHeldError naming it.
	ErrLeaseHeld = errors.New("lease held by another owner")
	// ErrLeaseLost: the lease is no longer the caller's — it expired and
	// another owner took it, or it was released — so the caller must not
	// act for its resource any more (RenewLease, ReleaseLease, WithLease).
	ErrLeaseLost = errors.New("lease lost")
	// ErrFenced: a write under a lease (Fence, WithLease) was refused
	// because the writer no longer holds the lease with its token —
	// another owner took it over, or it was released — and nothing of
	// the write was committed. Such errors also match ErrLeaseLost.
	ErrFenced = errors.New("write fenced out")
)

// Coordinator gives leases and signals on one database. Create it with
// New; it is safe for concurrent use.
type Coordinator struct {
	db  *sqldb.DB
	sig signaler // Notify and Listen (signals.go)
}

// New returns the Coordinator of db: signals through PostgreSQL's
// LISTEN/NOTIFY when db is PostgreSQL, in process otherwise.
func New(db *sqldb.DB) *Coordinator {
	c := &Coordinator{db: db}
	if cfg := db.PGConfig(); cfg != nil {
		c.sig = newPGSignals(cfg, db.Read(), db.Logger())
	} else {
		c.sig = newLocalSignals()
	}
	return c
}
