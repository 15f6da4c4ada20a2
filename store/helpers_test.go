package store

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
	"go.uber.org/goleak"
)

// pg is the test process's PostgreSQL server (pgtest), started once by
// TestMain, with a database migrated to the newest schema that each test's
// fresh database copies. srv is nil when PostgreSQL is not installed; err
// says why.
var pg struct {
	srv      *pgtest.Server
	err      error
	template string
}

// TestMain starts the PostgreSQL server, runs the tests, stops it and
// checks for leaked goroutines. PGTEST_DURABLE=1 keeps fsync on (for
// benchmarks comparing with SQLite's synchronous=FULL).
func TestMain(m *testing.M) {
	ctx := context.Background()
	pg.srv, pg.err = pgtest.Start(ctx, pgtest.Options{Durable: os.Getenv("PGTEST_DURABLE") == "1"})
	if pg.err == nil {
		pg.template = "bridge_template"
		pg.err = migrateTemplate(ctx, pg.srv, pg.template)
	}
	code := m.Run()
	if pg.srv != nil {
		if err := pg.srv.Stop(); err != nil {
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
	os.Exit(code)
}

// migrateTemplate creates database name with the newest schema.
func migrateTemplate(ctx context.Context, srv *pgtest.Server, name string) error {
	if err := srv.CreateDatabase(ctx, name, ""); err != nil {
		return err
	}
	s, err := OpenPostgres(ctx, srv.DSN(name), nil)
	if err != nil {
		return fmt.Errorf("migrate the template database: %w", err)
	}
	return s.Close()
}

// drivers are the databases every store test runs against.
var drivers = []string{DriverSQLite, DriverPostgres}

// eachStore runs f once per driver, as subtests "sqlite" and "postgres",
// each with a fresh store at the newest schema (closed when f's test ends).
// Without PostgreSQL the postgres subtest is skipped, or fails under CI.
func eachStore(t *testing.T, f func(t *testing.T, s *Store)) {
	t.Helper()
	for _, d := range drivers {
		t.Run(d, func(t *testing.T) { f(t, openTestDriver(t, d)) })
	}
}

// eachStoreB is eachStore for benchmarks.
func eachStoreB(b *testing.B, f func(b *testing.B, s *Store)) {
	b.Helper()
	for _, d := range drivers {
		b.Run(d, func(b *testing.B) { f(b, openTestDriver(b, d)) })
	}
}

// openTest opens a SQLite store on a fresh file in t.TempDir and closes it
// at the end of the test.
func openTest(t testing.TB) *Store {
	t.Helper()
	return openTestDriver(t, DriverSQLite)
}

// openTestDriver opens a fresh store of driver at the newest schema and
// closes it at the end of the test.
func openTestDriver(t testing.TB, driver string) *Store {
	t.Helper()
	var s *Store
	var err error
	switch driver {
	case DriverSQLite:
		s, err = Open(context.Background(), filepath.Join(t.TempDir(), "bridge.db"), nil)
	case DriverPostgres:
		srv := pgtest.Require(t, pg.srv, pg.err)
		s, err = OpenPostgres(context.Background(), srv.NewDatabase(t, pg.template), nil)
	default:
		t.Fatalf("unknown driver %q", driver)
	}
	if err != nil {
		t.Fatalf("open %s store: %v", driver, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// testDB is an empty database of one driver, for tests that open, close
// and reopen a store: a file path (sqlite) or a DSN (postgres).
type testDB struct {
	driver, where string
}

// emptyDB returns a new empty database of driver.
func emptyDB(t testing.TB, driver string) testDB {
	t.Helper()
	if driver == DriverPostgres {
		return testDB{driver, pgtest.Require(t, pg.srv, pg.err).NewDatabase(t, "")}
	}
	return testDB{driver, filepath.Join(t.TempDir(), "bridge.db")}
}

// migrationsOf returns driver's embedded migrations.
func migrationsOf(t testing.TB, driver string) []migrations.Migration {
	t.Helper()
	list := migrations.List
	if driver == DriverPostgres {
		list = migrations.ListPostgres
	}
	ms, err := list()
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// open opens a store on db migrated with ms (nil: every migration).
func (db testDB) open(ctx context.Context, ms []migrations.Migration) (*Store, error) {
	switch {
	case db.driver == DriverPostgres && ms == nil:
		return OpenPostgres(ctx, db.where, nil)
	case db.driver == DriverPostgres:
		return openPostgres(ctx, db.where, nil, ms)
	case ms == nil:
		return Open(ctx, db.where, nil)
	default:
		return open(ctx, db.where, nil, ms)
	}
}

// stepClock is a deterministic clock: every reading is step later than the
// previous one (step 0 freezes it).
type stepClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

// useClock makes s read time from a stepClock starting at start.
func useClock(s *Store, start time.Time, step time.Duration) *stepClock {
	c := &stepClock{t: start, step: step}
	s.now = c.Now
	return c
}

// newConv creates a conversation for bot/channel/thread.
func newConv(t testing.TB, s *Store, bot, channel, thread string) Conversation {
	t.Helper()
	c, _, err := s.GetOrCreateConversation(context.Background(), ConversationKey{bot, channel, thread}, "coder", "U1")
	if err != nil {
		t.Fatalf("GetOrCreateConversation: %v", err)
	}
	return c
}

// enqueue stores a message with platform id msgID in conv.
func enqueue(t testing.TB, s *Store, conv Conversation, msgID string) InboxMessage {
	t.Helper()
	m, dup, err := s.Enqueue(context.Background(), InboxMessage{ConversationID: conv.ID, PlatformMsgID: msgID, Text: "text " + msgID})
	if err != nil {
		t.Fatalf("Enqueue %s: %v", msgID, err)
	}
	if dup {
		t.Fatalf("Enqueue %s: unexpected duplicate", msgID)
	}
	return m
}

// countRows runs a COUNT query.
func countRows(t testing.TB, db *sql.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func wantErrIs(t testing.TB, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error = %v, want %v", what, err, target)
	}
}
