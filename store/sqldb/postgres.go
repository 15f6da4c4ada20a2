package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// Driver names, as config's store.driver spells them.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// minPostgresVersion is the oldest server the store accepts (15: what the
// tests run against; the schema uses nothing newer).
const minPostgresVersion = 150000

// IdleInTransactionTimeout is how long a PostgreSQL session of the store
// may sit inside a transaction without sending anything before the server
// ends it (idle_in_transaction_session_timeout), unless the DSN sets it.
const IdleInTransactionTimeout = "30s"

// pgReadConns bounds the read pool of a PostgreSQL store; writes use one
// more connection (see DB).
const pgReadConns = 8

// OpenPostgres opens the PostgreSQL database dsn (a libpq connection
// string or postgres:// URL, as pgx parses it) and applies every migration
// of opt it does not have yet, with the same rules as Open: each migration
// in its own transaction with its version row, a newer schema refused with
// ErrSchemaTooNew. The database must exist; the store creates its tables
// in the connection's default schema. opt.Params is ignored.
//
// Writes go through one connection, as with SQLite, so the repository
// methods' read-check-write transactions cannot interleave within this
// process. Several processes writing one database — replicas — coordinate
// through leases and signals (package coord).
func OpenPostgres(ctx context.Context, dsn string, opt Options) (*DB, error) {
	if dsn == "" {
		return nil, fmt.Errorf("open postgres store: empty dsn: %w", ErrInvalidArgument)
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx's parse errors repeat the DSN, password included: say only why.
		var pe *pgconn.ParseConfigError
		if errors.As(err, &pe) && pe.Unwrap() != nil {
			err = pe.Unwrap()
		}
		return nil, fmt.Errorf("open postgres store: parse dsn: %v: %w", err, ErrInvalidArgument)
	}
	if cfg.RuntimeParams["application_name"] == "" {
		// Names this bridge in pg_stat_activity, and to a second bridge
		// that HoldOwner refuses.
		host, _ := os.Hostname()
		cfg.RuntimeParams["application_name"] = fmt.Sprintf("agentbridge on %s pid %d", host, os.Getpid())
	}
	if cfg.RuntimeParams["idle_in_transaction_session_timeout"] == "" {
		// A process stopped inside a transaction (paused, frozen, cut off)
		// would hold its row locks for as long as it stays stopped: a
		// fenced write's FOR SHARE on a lease row (package coord) would
		// block every take-over of that lease. The server ends such a
		// session instead; the store's transactions are short.
		cfg.RuntimeParams["idle_in_transaction_session_timeout"] = IdleInTransactionTimeout
	}
	where := fmt.Sprintf("postgres %s/%s", cfg.Host, cfg.Database)
	conn := rebindConnector{stdlib.GetConnector(*cfg)}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(pgReadConns)
	db.SetMaxIdleConns(pgReadConns)
	w := sql.OpenDB(conn)
	w.SetMaxOpenConns(1)
	s := newDB(postgresDialect{}, db, w, "", opt.Logger)
	s.pg = cfg.Copy()
	if err := s.init(ctx, opt.Migrations); err != nil {
		return nil, errors.Join(fmt.Errorf("open store %s: %w", where, err), db.Close(), w.Close())
	}
	return s, nil
}

// PostgreSQL error codes the store maps (Appendix A of the manual).
const (
	pgUniqueViolation      = "23505"
	pgSerializationFailure = "40001"
	pgDeadlockDetected     = "40P01"
	pgLockNotAvailable     = "55P03"
	pgDiskFull             = "53100"
	pgIOError              = "58030"
)

// pgCode returns the SQLSTATE of a PostgreSQL error in err's chain, or "".
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}
