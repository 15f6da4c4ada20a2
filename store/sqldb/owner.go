package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// ErrInUse: another bridge holds the database (HoldOwner).
var ErrInUse = errors.New("database in use by another bridge")

// ownerLockKey is the session advisory lock HoldOwner takes (one above the
// schema's).
const ownerLockKey = schemaLockKey + 1

// Owner is a bridge's hold on its database (HoldOwner). Release gives it
// up; so does the end of the process, or of its connection.
type Owner struct {
	conn *sql.Conn // nil for SQLite
}

// HoldOwner makes this process the only bridge on a PostgreSQL store until
// Release: a session advisory lock on a connection of its own, so that a
// second bridge pointed at the same database — from another machine, where
// the data_dir lock cannot see it — is refused at start instead of
// recovering, expiring and answering the first one's conversations. The
// refusal wraps ErrInUse and names the holder's connection
// (application_name: host and pid). Several bridges on one database need
// the core to hold conversation leases (package coord), which it does not yet.
// For SQLite it does nothing: the data_dir lock does that job.
func (s *DB) HoldOwner(ctx context.Context) (*Owner, error) {
	if s.d.Name() != DriverPostgres {
		return &Owner{}, nil
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("hold the database: %w", err)
	}
	var got bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(?)`, ownerLockKey).Scan(&got); err != nil {
		return nil, errors.Join(fmt.Errorf("hold the database: %w", err), conn.Close())
	}
	if got {
		return &Owner{conn: conn}, nil
	}
	holders := lockHolders(ctx, conn, ownerLockKey)
	return nil, errors.Join(fmt.Errorf("%w (held by %s)", ErrInUse, holders), conn.Close())
}

// lockHolders names the connections that hold advisory lock key in this
// database (advisory locks are per database; pg_locks shows every
// database's), or says that they could not be read.
func lockHolders(ctx context.Context, conn *sql.Conn, key int64) string {
	rows, err := conn.QueryContext(ctx, `SELECT COALESCE(NULLIF(a.application_name, ''), 'a client')
			|| ' from ' || COALESCE(host(a.client_addr), 'a local socket')
		FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.classid::bigint = ? AND l.objid::bigint = ?
			AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
		int64(uint32(key>>32)), int64(uint32(key)))
	if err != nil {
		return "another connection"
	}
	names, err := Collect(rows, func(r Scanner) (string, error) {
		var n string
		err := r.Scan(&n)
		return n, err
	})
	if err != nil || len(names) == 0 {
		return "another connection"
	}
	return strings.Join(names, ", ")
}

// Release gives up the hold. Calls after the first return nil.
func (o *Owner) Release() error {
	if o == nil || o.conn == nil {
		return nil
	}
	conn := o.conn
	o.conn = nil
	_, err := conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(?)`, ownerLockKey)
	if err := errors.Join(err, conn.Close()); err != nil {
		return fmt.Errorf("release the database: %w", err)
	}
	return nil
}
