package store

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/agentbridge/agentbridge/migrations"
	"github.com/agentbridge/agentbridge/store/convstore"
	"github.com/agentbridge/agentbridge/store/coord"
	"github.com/agentbridge/agentbridge/store/dbcopy"
	"github.com/agentbridge/agentbridge/store/schedstore"
	"github.com/agentbridge/agentbridge/store/sqldb"
	"github.com/agentbridge/agentbridge/store/webstore"
)

// The repositories Store embeds, by these names so that the embedded
// fields stay unexported: callers see one Store, its methods those of all
// the repositories.
type (
	conversations = convstore.Store
	schedules     = schedstore.Store
	webConsole    = webstore.Store
	coordinator   = coord.Coordinator
)

// Store is the bridge database. Create it with Open or OpenPostgres; it is
// safe for concurrent use. Close it when done.
//
// It is one database handle (sqldb.DB) and the repositories on it: the
// conversations and their ledger (convstore), schedules (schedstore), the
// web console (webstore), leases and signals (coord); its own methods
// span them (Prune, Close) or are the handle's.
type Store struct {
	*conversations
	*schedules
	*webConsole
	*coordinator

	db         *sqldb.DB
	pruneBatch int // rows per Prune transaction; defaultPruneBatch
}

// Open opens (creating if needed) the SQLite database at path, creating its
// parent directory, and applies every embedded migration the file does not
// have yet, each in its own transaction. Opening an up-to-date database
// changes nothing. A database whose schema is newer than this binary knows is
// refused with an error wrapping ErrSchemaTooNew. logger may be nil.
func Open(ctx context.Context, path string, logger *slog.Logger) (*Store, error) {
	ms, err := migrations.List()
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	db, err := sqldb.Open(ctx, path, sqldb.Options{Migrations: ms, Logger: logger})
	if err != nil {
		return nil, err
	}
	return compose(db), nil
}

// OpenPostgres opens the PostgreSQL database dsn (a libpq connection
// string or postgres:// URL, as pgx parses it) and applies every embedded
// PostgreSQL migration it does not have yet, with the same rules as Open:
// each migration in its own transaction with its version row, a newer
// schema refused with ErrSchemaTooNew. The database must exist; the store
// creates its tables in the connection's default schema. logger may be nil.
//
// Writes go through one connection, as with SQLite, so the repository
// methods' read-check-write transactions cannot interleave within this
// process. Several processes writing one database — replicas — coordinate
// through leases and signals.
func OpenPostgres(ctx context.Context, dsn string, logger *slog.Logger) (*Store, error) {
	ms, err := migrations.ListPostgres()
	if err != nil {
		return nil, fmt.Errorf("open postgres store: %w", err)
	}
	db, err := sqldb.OpenPostgres(ctx, dsn, sqldb.Options{Migrations: ms, Logger: logger})
	if err != nil {
		return nil, err
	}
	return compose(db), nil
}

// compose returns the Store of the repositories on db.
func compose(db *sqldb.DB) *Store {
	return &Store{
		conversations: convstore.New(db),
		schedules:     schedstore.New(db),
		webConsole:    webstore.New(db),
		coordinator:   coord.New(db),
		db:            db,
		pruneBatch:    defaultPruneBatch,
	}
}

// Driver returns the store's database: DriverSQLite or DriverPostgres.
func (s *Store) Driver() string { return s.db.Driver() }

// Close closes the database. Calls after the first return nil. Cancel the
// contexts of Listen calls first.
func (s *Store) Close() error { return s.db.Close() }

// SchemaVersion returns the database's schema version: the highest applied
// migration, 0 for an empty database.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) { return s.db.SchemaVersion(ctx) }

// WriteHealth returns whether the database can be written (see
// WriteHealth). While it is full, it also checks (at most every few
// seconds) whether the SQLite database's directory has room again, so
// that the condition clears by itself even when no write comes. It never
// blocks on the database.
func (s *Store) WriteHealth() WriteHealth { return s.db.WriteHealth() }

// HoldOwner makes this process the only bridge on a PostgreSQL store until
// Release: a second bridge pointed at the same database is refused at
// start with an error wrapping ErrInUse that names the holder. For SQLite
// it does nothing: the data_dir lock does that job.
func (s *Store) HoldOwner(ctx context.Context) (*Owner, error) { return s.db.HoldOwner(ctx) }

// Copy copies every row of every table of from into to, which must be
// another store at the same schema version with no rows in any table
// (ErrTargetNotEmpty otherwise). See dbcopy.Copy.
func Copy(ctx context.Context, from, to *Store) ([]TableCount, error) {
	return dbcopy.Copy(ctx, from.db, to.db)
}
