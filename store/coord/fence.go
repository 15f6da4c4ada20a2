package coord

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/agentbridge/agentbridge/store/sqldb"
)

// Fence returns the check that makes a write transaction a write under
// lease l (Kleppmann's fencing token): it reads l's row in the
// transaction and refuses, with an error matching ErrFenced and
// ErrLeaseLost, unless l's owner still holds the resource with l's token.
// The read holds the lease's row until the commit (SELECT … FOR SHARE on
// PostgreSQL; SQLite's transaction excludes every other writer), so a
// take-over (AcquireLease's UPDATE of that row) waits for the write to
// commit and then sees it: a replica that lost its lease — paused past the
// expiry, cut off from the database — can never overwrite what the new
// holder wrote, whatever its own clock says.
//
// Expiry alone does not fail the check: until another owner takes the
// lease over, nobody else has written, and the holder that renews late
// (RenewLease accepts an expired lease nobody took) carries on. A renewal
// of l waits for a fenced write to commit (FOR SHARE blocks its UPDATE):
// write transactions are short.
//
// It costs one indexed read per write transaction (the leases table's
// primary key). Use it with sqldb.DB.Guarded (store.Store.Fenced) or
// WithLease.
func (s *Coordinator) Fence(l Lease) sqldb.Guard {
	q := `SELECT owner, token FROM leases WHERE resource = ?` + s.db.Dialect().ForShare()
	return func(ctx context.Context, tx *sql.Tx) error {
		var owner string
		var token int64
		err := tx.QueryRowContext(ctx, q, l.Resource).Scan(&owner, &token)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %w: %s was never leased", ErrFenced, ErrLeaseLost, l.Resource)
		}
		if err != nil {
			return fmt.Errorf("check the lease %s: %w", l.Resource, err)
		}
		if owner != l.Owner || token != l.Token {
			return fmt.Errorf("%w: %w: %s is %s, not %s's token %d", ErrFenced, ErrLeaseLost, l.Resource,
				describeHolder(owner, token), l.Owner, l.Token)
		}
		return nil
	}
}
