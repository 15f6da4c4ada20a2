package sqldb

import (
	"context"
	"database/sql"
	"fmt"
)

// Guard is a condition every write of a guarded DB (Guarded) checks
// first, inside the write's own transaction: a non-nil error refuses the
// write, nothing of it is committed, and the writer gets that error
// (wrapped). It must do its work through tx and may lock rows there
// (SELECT … FOR SHARE) so that the condition holds until the commit.
// Package coord's lease fence is one (store.Store.Fenced).
type Guard func(ctx context.Context, tx *sql.Tx) error

// Guarded returns a handle on the same database — the same pools, the
// same writer and write gate, the same write health — whose every write
// checks g first in the same transaction: WithTx and WithTxClass run g
// before fn, Exec runs its statement in a transaction after g, and Write
// (which hands out the writer connection, not a transaction) refuses with
// ErrInvalidArgument rather than write unchecked. Reads are not guarded.
// The receiver is unchanged; Guarded of a guarded handle replaces its
// guard.
func (s *DB) Guarded(g Guard) *DB {
	c := *s
	c.guard = g
	return &c
}

// guarded returns fn preceded by g's check.
func guarded(ctx context.Context, g Guard, fn func(tx *sql.Tx) error) func(tx *sql.Tx) error {
	return func(tx *sql.Tx) error {
		if err := g(ctx, tx); err != nil {
			return err
		}
		return fn(tx)
	}
}

// execGuarded is Exec on a guarded handle: the guard and the statement in
// one transaction.
func (s *DB) execGuarded(ctx context.Context, urgent bool, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := s.WithTxClass(ctx, urgent, func(tx *sql.Tx) error {
		var err error
		res, err = tx.ExecContext(ctx, query, args...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// errUnguardedWrite is Write's refusal on a guarded handle.
var errUnguardedWrite = fmt.Errorf("a guarded store cannot write outside a transaction: %w", ErrInvalidArgument)
