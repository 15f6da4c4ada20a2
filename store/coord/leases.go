package coord

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/store/sqldb"
)

// Leases let several replicas of the bridge share one database: a replica
// acts for a resource — runs a conversation's agent, holds a Discord
// gateway or a WhatsApp device — only while it holds the resource's lease.
// A lease has an owner (the replica's id), an expiry and a fencing token,
// and lives in the leases table (migration 0016).
//
// Expiry is decided on the database's clock (now() on PostgreSQL), never
// a replica's: replicas' clocks differ (NTP skew, a VM resumed from a
// pause), and a replica whose clock ran ahead would take over a lease its
// holder still rightly believes it holds — two replicas acting for one
// conversation. With one clock deciding, a replica's own clock only
// measures durations: Lease.ValidUntil, the deadline by which the holder
// stops acting unless it renewed, counts from before its request reached
// the database, so it passes before the database lets anyone else in.
//
// The fencing token says which tenure a write belongs to: it goes up by one
// each time the lease is taken rather than continued. WithLease checks it
// in the writing transaction, so a replica that lost its lease — paused
// past the expiry, cut off from the database — cannot overwrite what the
// new holder wrote, whatever its own clock says.
//
// Owner ids must be unique per process start (e.g. host, pid and a random
// part): a restarted replica that reused its predecessor's id would inherit
// that one's live leases and tokens.
//
// On SQLite the same statements run on SQLite's clock; one bridge owns a
// data_dir (its lock), so its leases are simply always held, and the core
// can run the same code on both databases.

// Lease is a grant of a resource to an owner.
type Lease struct {
	Resource   string    // what is leased, e.g. "conversation:<id>"
	Owner      string    // the replica holding it
	Token      int64     // fencing token: higher for each new tenure, from 1
	AcquiredAt time.Time // when this tenure began, on the database's clock
	ExpiresAt  time.Time // when others may take it over, on the database's clock
	// ValidUntil is on this process's clock: the holder may act for the
	// resource until then, and must renew before. It is earlier than
	// ExpiresAt in real time whatever the clocks' offsets. Zero in
	// listings (Leases).
	ValidUntil time.Time
}

// LeaseHeldError is AcquireLease's refusal: Holder holds the lease.
// errors.Is(err, ErrLeaseHeld) holds for it.
type LeaseHeldError struct{ Holder Lease }

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("lease %s held by %s (token %d) until %s", e.Holder.Resource, e.Holder.Owner, e.Holder.Token,
		e.Holder.ExpiresAt.Format(time.RFC3339Nano))
}

func (e *LeaseHeldError) Unwrap() error { return ErrLeaseHeld }

// leaseCols are the columns scanLease reads, in its order.
const leaseCols = `resource, owner, token, acquired_at, expires_at`

func scanLease(r sqldb.Scanner) (Lease, error) {
	var l Lease
	var acquired, expires int64
	if err := r.Scan(&l.Resource, &l.Owner, &l.Token, &acquired, &expires); err != nil {
		return Lease{}, err
	}
	l.AcquiredAt, l.ExpiresAt = sqldb.FromMS(acquired), sqldb.FromMS(expires)
	return l, nil
}

// leaseAttempts bounds AcquireLease's retries when the lease it was refused
// is free by the time it reads the holder (released in between).
const leaseAttempts = 3

// AcquireLease gives resource to owner for ttl (at least a millisecond) and
// returns the lease. It succeeds when the lease is free (never taken,
// released, or expired on the database's clock) or already owner's:
//   - owner still holding it continues its tenure: same token, the expiry
//     moved to ttl from now;
//   - anyone else, or owner after its lease expired or was released, starts
//     a new tenure with the token one higher (1 for a resource never
//     leased), so writes of any earlier tenure are refused (WithLease).
//
// Otherwise it returns a *LeaseHeldError naming the holder (ErrLeaseHeld).
// Of owners racing for a free lease, exactly one gets it. It never waits
// for the lease, but may wait for a WithLease transaction of the holder to
// commit. On PostgreSQL lease statements do not queue behind the store's
// other writes (a renewal must not miss its expiry waiting for them).
func (s *Coordinator) AcquireLease(ctx context.Context, resource, owner string, ttl time.Duration) (Lease, error) {
	if err := checkLease(resource, owner, ttl); err != nil {
		return Lease{}, fmt.Errorf("acquire lease %s: %w", resource, err)
	}
	now := s.db.Dialect().ClockMS()
	continued := `leases.owner = excluded.owner AND leases.expires_at > ` + now
	q := `INSERT INTO leases (resource, owner, token, acquired_at, expires_at) VALUES (?1, ?2, 1, ` + now + `, ` + now + ` + ?3)
		ON CONFLICT (resource) DO UPDATE SET
			token = CASE WHEN ` + continued + ` THEN leases.token ELSE leases.token + 1 END,
			acquired_at = CASE WHEN ` + continued + ` THEN leases.acquired_at ELSE excluded.acquired_at END,
			owner = excluded.owner,
			expires_at = excluded.expires_at
		WHERE leases.owner = excluded.owner OR leases.owner = '' OR leases.expires_at <= ` + now + `
		RETURNING ` + leaseCols
	var holder Lease
	for range leaseAttempts {
		start := s.db.Now()
		l, err := s.leaseRow(ctx, q, resource, owner, ttl.Milliseconds())
		if err == nil {
			l.ValidUntil = start.Add(ttl)
			return l, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return Lease{}, fmt.Errorf("acquire lease %s: %w", resource, err)
		}
		var free bool
		holder, free, err = s.leaseHolder(ctx, resource)
		if err != nil {
			return Lease{}, fmt.Errorf("acquire lease %s: %w", resource, err)
		}
		if !free {
			break
		}
	}
	return Lease{}, &LeaseHeldError{Holder: holder}
}

// RenewLease moves the expiry of l to ttl from now, keeping its token, and
// returns the renewed lease. Only l's owner with l's token may: if the
// lease has since been taken over or released it returns ErrLeaseLost and
// changes nothing. A lease that expired but that nobody took is renewed:
// nobody else acted for the resource meanwhile.
func (s *Coordinator) RenewLease(ctx context.Context, l Lease, ttl time.Duration) (Lease, error) {
	if err := checkLease(l.Resource, l.Owner, ttl); err != nil {
		return Lease{}, fmt.Errorf("renew lease %s: %w", l.Resource, err)
	}
	start := s.db.Now()
	r, err := s.leaseRow(ctx, `UPDATE leases SET expires_at = `+s.db.Dialect().ClockMS()+` + ?4
		WHERE resource = ?1 AND owner = ?2 AND token = ?3 RETURNING `+leaseCols, l.Resource, l.Owner, l.Token, ttl.Milliseconds())
	if errors.Is(err, sql.ErrNoRows) {
		return Lease{}, fmt.Errorf("renew lease %s: %w", l.Resource, s.lost(ctx, l))
	}
	if err != nil {
		return Lease{}, fmt.Errorf("renew lease %s: %w", l.Resource, err)
	}
	r.ValidUntil = start.Add(ttl)
	return r, nil
}

// ReleaseLease hands l over: the next AcquireLease by anyone succeeds at
// once, with the next token, instead of waiting for the expiry. The holder
// calls it when it stops gracefully, after its last write. If l is no
// longer held with its token it returns ErrLeaseLost and changes nothing.
func (s *Coordinator) ReleaseLease(ctx context.Context, l Lease) error {
	q := `UPDATE leases SET owner = '', expires_at = ` + s.db.Dialect().ClockMS() + ` WHERE resource = ? AND owner = ? AND token = ?`
	var res sql.Result
	var err error
	if s.db.Driver() == sqldb.DriverPostgres {
		res, err = s.db.Read().ExecContext(ctx, q, l.Resource, l.Owner, l.Token)
		err = s.db.NoteWrite(err)
	} else {
		res, err = s.db.Exec(ctx, true, q, l.Resource, l.Owner, l.Token)
	}
	if err != nil {
		return fmt.Errorf("release lease %s: %w", l.Resource, err)
	}
	n, err := sqldb.RowsAffected(res)
	if err != nil {
		return fmt.Errorf("release lease %s: %w", l.Resource, err)
	}
	if n == 0 {
		return fmt.Errorf("release lease %s: %w", l.Resource, s.lost(ctx, l))
	}
	return nil
}

// Leases lists the leases owner holds now (not expired on the database's
// clock), by resource; owner "" lists every held lease, whoever holds it.
// Their ValidUntil is zero: a listing grants nothing.
func (s *Coordinator) Leases(ctx context.Context, owner string) ([]Lease, error) {
	q := `SELECT ` + leaseCols + ` FROM leases WHERE owner <> '' AND expires_at > ` + s.db.Dialect().ClockMS()
	var args []any
	if owner != "" {
		q += ` AND owner = ?`
		args = append(args, owner)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY resource`, args...)
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	ls, err := sqldb.Collect(rows, scanLease)
	if err != nil {
		return nil, fmt.Errorf("list leases: %w", err)
	}
	return ls, nil
}

// WithLease runs fn in a write transaction that first checks l (Fence),
// and returns an error matching ErrFenced and ErrLeaseLost without
// calling fn when l's owner no longer holds its resource with l's token.
//
// fn must do all its work through tx and call no other Store method that
// writes (they wait for the same writer: a deadlock). It commits when fn
// returns nil and rolls back otherwise, returning fn's error.
func (s *Coordinator) WithLease(ctx context.Context, l Lease, fn func(tx *sql.Tx) error) error {
	check := s.Fence(l)
	err := s.db.WithTx(ctx, func(tx *sql.Tx) error {
		if err := check(ctx, tx); err != nil {
			return err
		}
		return fn(tx)
	})
	if err != nil {
		return fmt.Errorf("write under lease %s: %w", l.Resource, err)
	}
	return nil
}

// leaseRow runs one lease statement returning a lease row: on PostgreSQL
// on the read pool, an atomic statement that needs not wait for the
// store's writer; on SQLite through its one writer, ahead of normal writes.
func (s *Coordinator) leaseRow(ctx context.Context, q string, args ...any) (Lease, error) {
	if s.db.Driver() == sqldb.DriverPostgres {
		l, err := scanLease(s.db.QueryRowContext(ctx, q, args...))
		if errors.Is(err, sql.ErrNoRows) {
			return Lease{}, err
		}
		return l, s.db.NoteWrite(err)
	}
	var l Lease
	err := s.db.Write(ctx, true, func(w *sql.DB) error {
		var err error
		l, err = scanLease(w.QueryRowContext(ctx, q, args...))
		return err
	})
	return l, err
}

// leaseHolder reads resource's lease and whether it is free now (never
// taken, released or expired).
func (s *Coordinator) leaseHolder(ctx context.Context, resource string) (Lease, bool, error) {
	var l Lease
	var acquired, expires int64
	var free int
	err := s.db.QueryRowContext(ctx, `SELECT `+leaseCols+`, CASE WHEN owner = '' OR expires_at <= `+s.db.Dialect().ClockMS()+` THEN 1 ELSE 0 END
		FROM leases WHERE resource = ?`, resource).Scan(&l.Resource, &l.Owner, &l.Token, &acquired, &expires, &free)
	if errors.Is(err, sql.ErrNoRows) {
		return Lease{Resource: resource}, true, nil
	}
	if err != nil {
		return Lease{}, false, fmt.Errorf("read the lease: %w", err)
	}
	l.AcquiredAt, l.ExpiresAt = sqldb.FromMS(acquired), sqldb.FromMS(expires)
	return l, free == 1, nil
}

// lost is ErrLeaseLost for l, saying who holds the resource now.
func (s *Coordinator) lost(ctx context.Context, l Lease) error {
	now, _, err := s.leaseHolder(ctx, l.Resource)
	if err != nil {
		return fmt.Errorf("%w: token %d of %s (%w)", ErrLeaseLost, l.Token, l.Owner, err)
	}
	return fmt.Errorf("%w: %s is %s, not %s's token %d", ErrLeaseLost, l.Resource, describeHolder(now.Owner, now.Token), l.Owner, l.Token)
}

func describeHolder(owner string, token int64) string {
	switch {
	case owner == "" && token == 0:
		return "not leased"
	case owner == "":
		return fmt.Sprintf("released (token %d)", token)
	default:
		return fmt.Sprintf("held by %s with token %d", owner, token)
	}
}

// checkLease validates AcquireLease's and RenewLease's arguments.
func checkLease(resource, owner string, ttl time.Duration) error {
	switch {
	case resource == "":
		return fmt.Errorf("empty resource: %w", sqldb.ErrInvalidArgument)
	case owner == "":
		return fmt.Errorf("empty owner: %w", sqldb.ErrInvalidArgument)
	case ttl < time.Millisecond:
		return fmt.Errorf("lease time %v, want at least 1ms: %w", ttl, sqldb.ErrInvalidArgument)
	}
	return nil
}
