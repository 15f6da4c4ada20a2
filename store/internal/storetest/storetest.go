// Package storetest is the test kit of the store's packages: every store
// test runs on SQLite and on PostgreSQL (a throwaway server from pgtest,
// one per test process), each test on a fresh database.
//
// A test package holds one Kit of its store type, made from a database
// by the package's New, and runs it from TestMain:
//
//	var kit = storetest.Kit[*Store]{New: New}
//
//	func TestMain(m *testing.M) { os.Exit(kit.Run(m)) }
//
// and opens stores with kit.Each and kit.Open, databases with kit.Fresh
// and kit.Empty.
// Without PostgreSQL the postgres subtests are skipped, or fail under CI
// (pgtest.Require).
package storetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/migrations"
	"github.com/agentbridge/agentbridge/store/pgtest"
	"github.com/agentbridge/agentbridge/store/sqldb"
	"go.uber.org/goleak"
)

// templateDB is the PostgreSQL database at the newest schema that each
// test's fresh database copies.
const templateDB = "bridge_template"

// Kit is a test process's PostgreSQL server, started by Run, and the
// stores of type S it opens on fresh databases. A Kit with New set is
// ready for Run; its methods are safe for concurrent use once Run started
// the tests.
type Kit[S any] struct {
	// New makes the package's store on an open database (its New).
	New func(*sqldb.DB) S

	srv *pgtest.Server // nil when PostgreSQL is not installed; err says why
	err error
}

// Run starts the PostgreSQL server with a template database at the newest
// schema, runs the tests, stops the server and checks for leaked
// goroutines; it returns the exit code. PGTEST_DURABLE=1 keeps fsync on
// (for benchmarks comparing with SQLite's synchronous=FULL).
func (k *Kit[S]) Run(m *testing.M) int {
	ctx := context.Background()
	k.srv, k.err = pgtest.Start(ctx, pgtest.Options{Durable: os.Getenv("PGTEST_DURABLE") == "1"})
	if k.err == nil {
		k.err = migrateTemplate(ctx, k.srv)
	}
	code := m.Run()
	if k.srv != nil {
		if err := k.srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop PostgreSQL:", err)
			code = 1
		}
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	return code
}

// migrateTemplate creates the template database with the newest schema.
func migrateTemplate(ctx context.Context, srv *pgtest.Server) error {
	if err := srv.CreateDatabase(ctx, templateDB, ""); err != nil {
		return err
	}
	db, err := DB{sqldb.DriverPostgres, srv.DSN(templateDB)}.Open(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate the template database: %w", err)
	}
	return db.Close()
}

// Drivers are the databases every store test runs against.
func Drivers() []string { return []string{sqldb.DriverSQLite, sqldb.DriverPostgres} }

// Each runs f once per driver, as subtests "sqlite" and "postgres", each
// with a store on a fresh database at the newest schema (closed when f's
// test ends).
func (k *Kit[S]) Each(t *testing.T, f func(t *testing.T, s S)) {
	t.Helper()
	for _, d := range Drivers() {
		t.Run(d, func(t *testing.T) { f(t, k.Open(t, d)) })
	}
}

// EachB is Each for benchmarks.
func (k *Kit[S]) EachB(b *testing.B, f func(b *testing.B, s S)) {
	b.Helper()
	for _, d := range Drivers() {
		b.Run(d, func(b *testing.B) { f(b, k.Open(b, d)) })
	}
}

// Open opens a store on a fresh database of driver at the newest schema
// and closes the database at the end of the test.
func (k *Kit[S]) Open(t testing.TB, driver string) S {
	t.Helper()
	db, err := k.Fresh(t, driver).Open(context.Background(), nil)
	if err != nil {
		t.Fatalf("open %s store: %v", driver, err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return k.New(db)
}

// OpenDB opens a store on db migrated with ms (nil: every embedded
// migration of its driver), for tests that open, close and reopen one
// database. The caller closes it.
func (k *Kit[S]) OpenDB(ctx context.Context, db DB, ms []migrations.Migration) (S, error) {
	d, err := db.Open(ctx, ms)
	if err != nil {
		var zero S
		return zero, err
	}
	return k.New(d), nil
}

// DB is a database of one driver, for tests that open, close and reopen
// it: a file path (sqlite) or a DSN (postgres).
type DB struct {
	Driver, Where string
}

// Empty returns a new empty database of driver.
func (k *Kit[S]) Empty(t testing.TB, driver string) DB {
	t.Helper()
	if driver == sqldb.DriverPostgres {
		return DB{driver, pgtest.Require(t, k.srv, k.err).NewDatabase(t, "")}
	}
	return DB{driver, filepath.Join(t.TempDir(), "bridge.db")}
}

// Fresh returns a new database of driver that opens at the newest schema
// without migrating (PostgreSQL: a copy of the template; SQLite: a new
// file, migrated when opened).
func (k *Kit[S]) Fresh(t testing.TB, driver string) DB {
	t.Helper()
	if driver == sqldb.DriverPostgres {
		return DB{driver, pgtest.Require(t, k.srv, k.err).NewDatabase(t, templateDB)}
	}
	return k.Empty(t, driver)
}

// Open opens db migrated with ms (nil: every embedded migration of its
// driver). The caller closes it.
func (db DB) Open(ctx context.Context, ms []migrations.Migration) (*sqldb.DB, error) {
	if ms == nil {
		var err error
		if ms, err = list(db.Driver)(); err != nil {
			return nil, err
		}
	}
	opt := sqldb.Options{Migrations: ms}
	if db.Driver == sqldb.DriverPostgres {
		return sqldb.OpenPostgres(ctx, db.Where, opt)
	}
	return sqldb.Open(ctx, db.Where, opt)
}

// Raw opens db without the store, for checks behind its back; it is
// closed at the end of the test.
func (db DB) Raw(t testing.TB) *sql.DB {
	t.Helper()
	var raw *sql.DB
	var err error
	if db.Driver == sqldb.DriverPostgres {
		raw, err = sql.Open("pgx", db.Where)
	} else {
		raw, err = sql.Open("sqlite3", sqldb.DSN(db.Where, sqldb.SQLiteParams))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return raw
}

func list(driver string) func() ([]migrations.Migration, error) {
	if driver == sqldb.DriverPostgres {
		return migrations.ListPostgres
	}
	return migrations.List
}

// Migrations returns driver's embedded migrations.
func Migrations(t testing.TB, driver string) []migrations.Migration {
	t.Helper()
	ms, err := list(driver)()
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// Clock is a deterministic clock: every reading is step later than the
// previous one (step 0 freezes it). It is safe for concurrent use.
type Clock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

// Now advances the clock by its step and reads it.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

// Time reads the clock without advancing it: the last reading.
func (c *Clock) Time() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t (the next reading is t + step).
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// UseClock makes db stamp rows with a Clock starting at start.
func UseClock(db *sqldb.DB, start time.Time, step time.Duration) *Clock {
	c := &Clock{t: start, step: step}
	db.SetClock(c.Now)
	return c
}

// CountRows runs a COUNT query.
func CountRows(t testing.TB, db *sql.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// WantErrIs fails the test unless errors.Is(err, target).
func WantErrIs(t testing.TB, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error = %v, want %v", what, err, target)
	}
}
