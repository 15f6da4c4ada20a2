package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentbridge/agentbridge/migrations"
	"github.com/agentbridge/agentbridge/store/internal/storetest"
)

// tableExists reports whether s's database has table name.
func tableExists(t *testing.T, s *Store, name string) bool {
	t.Helper()
	q := "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
	if s.Driver() == DriverPostgres {
		q = "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ?"
	}
	return storetest.CountRows(t, s.db.Read(), q, name) == 1
}

// TestOpenMigratesEmptyDatabase: SQLite only (a file path, PRAGMAs); the
// same for PostgreSQL is TestOpenPostgresMigratesEmptyDatabase.
func TestOpenMigratesEmptyDatabase(t *testing.T) {
	ctx := context.Background()
	// A missing parent directory with characters that are special in URIs.
	path := filepath.Join(t.TempDir(), "data dir", "we?ird#na%20me", "bridge.db")
	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()

	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database file not at the given path: %v", err)
	}
	v, err := s.SchemaVersion(ctx)
	if err != nil {
		t.Fatalf("SchemaVersion: %v", err)
	}
	ms := storetest.Migrations(t, DriverSQLite)
	if v != migrations.Latest(ms) {
		t.Fatalf("schema version %d, want %d", v, migrations.Latest(ms))
	}
	if n := storetest.CountRows(t, s.db.Read(), "SELECT COUNT(*) FROM schema_version"); n != len(ms) {
		t.Fatalf("schema_version rows = %d, want %d", n, len(ms))
	}
	for _, table := range []string{"schema_version", "conversations", "inbox", "outbox", "approvals", "usage"} {
		if n := storetest.CountRows(t, s.db.Read(), "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?", table); n != 1 {
			t.Errorf("table %s missing", table)
		}
	}
	pragmas := map[string]string{"journal_mode": "wal", "foreign_keys": "1", "synchronous": "2", "busy_timeout": "5000"}
	for p, want := range pragmas {
		var got string
		if err := s.db.Read().QueryRow("PRAGMA " + p).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", p, err)
		}
		if got != want {
			t.Errorf("PRAGMA %s = %q, want %q", p, got, want)
		}
	}
	// Foreign keys are enforced.
	_, err = s.db.Read().Exec(`INSERT INTO inbox (id, conversation_id, bot, platform_msg_id, created_at, updated_at)
		VALUES ('x', 'no-such-conversation', 'b', 'm', 0, 0)`)
	if err == nil || !strings.Contains(err.Error(), "FOREIGN KEY") {
		t.Fatalf("insert with dangling conversation: err = %v, want a FOREIGN KEY error", err)
	}
}

func TestReopenIsIdempotent(t *testing.T) {
	for _, driver := range storetest.Drivers() {
		t.Run(driver, func(t *testing.T) { testReopenIsIdempotent(t, kit.Empty(t, driver)) })
	}
}

func testReopenIsIdempotent(t *testing.T, db storetest.DB) {
	ctx := context.Background()
	s, err := open(ctx, db, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	conv := storetest.NewConvAt(t, s, "bot", "C1", "T1")
	msg := storetest.Enqueue(t, s, InboxMessage{ConversationID: conv.ID, PlatformMsgID: "m1", Text: "text m1"}, "m1")
	v1, err := s.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	for i := range 2 {
		s, err = open(ctx, db, nil)
		if err != nil {
			t.Fatalf("reopen %d: %v", i, err)
		}
		v2, err := s.SchemaVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v2 != v1 {
			t.Fatalf("reopen %d: version %d, want %d", i, v2, v1)
		}
		if n := storetest.CountRows(t, s.db.Read(), "SELECT COUNT(*) FROM schema_version"); n != v1 {
			t.Fatalf("reopen %d: %d schema_version rows, want %d", i, n, v1)
		}
		got, err := s.InboxByID(ctx, msg.ID)
		if err != nil {
			t.Fatalf("reopen %d: message lost: %v", i, err)
		}
		if got.Text != msg.Text || got.ConversationID != conv.ID {
			t.Fatalf("reopen %d: message = %+v, want %+v", i, got, msg)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	for _, driver := range storetest.Drivers() {
		t.Run(driver, func(t *testing.T) { testOpenRefusesNewerSchema(t, kit.Empty(t, driver)) })
	}
}

func testOpenRefusesNewerSchema(t *testing.T, tdb storetest.DB) {
	ctx := context.Background()
	s, err := open(ctx, tdb, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	latest := migrations.Latest(storetest.Migrations(t, tdb.Driver))
	if _, err := s.db.Read().Exec("INSERT INTO schema_version (version, name, applied_at) VALUES (?, 'future.sql', 0)", latest+1); err != nil {
		t.Fatalf("bump version: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s2, err := open(ctx, tdb, nil)
	if err == nil {
		s2.Close()
		t.Fatal("Open succeeded on a newer schema")
	}
	storetest.WantErrIs(t, "Open", err, ErrSchemaTooNew)
	if !strings.Contains(err.Error(), "upgrade the bridge") {
		t.Errorf("error %q does not tell the operator what to do", err)
	}

	// The refused database is left as it was.
	db := tdb.Raw(t)
	if n := storetest.CountRows(t, db, "SELECT MAX(version) FROM schema_version"); n != latest+1 {
		t.Fatalf("version after refusal = %d, want %d", n, latest+1)
	}
}

func TestMigrationsApplyIncrementallyAndAtomically(t *testing.T) {
	for _, driver := range storetest.Drivers() {
		t.Run(driver, func(t *testing.T) { testMigrationsApplyIncrementallyAndAtomically(t, kit.Empty(t, driver)) })
	}
}

func testMigrationsApplyIncrementallyAndAtomically(t *testing.T, db storetest.DB) {
	ctx := context.Background()
	ms := storetest.Migrations(t, db.Driver)

	// An old binary knowing only the first migration.
	s, err := open(ctx, db, ms[:1])
	if err != nil {
		t.Fatalf("open with 1 migration: %v", err)
	}
	if v, _ := s.SchemaVersion(ctx); v != 1 {
		t.Fatalf("version = %d, want 1", v)
	}
	s.Close()

	// A broken next migration: its first statement must be rolled back.
	broken := append(append([]migrations.Migration(nil), ms...), migrations.Migration{
		Version: len(ms) + 1,
		Name:    "9999_broken.sql",
		SQL:     "-- broken\nCREATE TABLE half_done (x INTEGER);\nINSERT INTO no_such_table VALUES (1);",
	})
	_, err = open(ctx, db, broken)
	if err == nil || !strings.Contains(err.Error(), "9999_broken.sql") {
		t.Fatalf("open with a broken migration: err = %v, want it to name the migration", err)
	}

	s, err = open(ctx, db, ms)
	if err != nil {
		t.Fatalf("open with all migrations: %v", err)
	}
	defer s.Close()
	if v, _ := s.SchemaVersion(ctx); v != len(ms) {
		t.Fatalf("version = %d, want %d (good migrations before the broken one stay applied)", v, len(ms))
	}
	if tableExists(t, s, "half_done") {
		t.Fatal("the broken migration's first statement was not rolled back")
	}
}

// TestConcurrentOpenOfFreshFile races several Opens (as several processes
// starting at once would) on new databases: all must succeed, and every
// migration must be applied exactly once. Switching a new file to WAL makes
// SQLite report SQLITE_BUSY without waiting, which Open must ride out; on
// PostgreSQL the schema's advisory lock serialises the migrations.
func TestConcurrentOpenOfFreshFile(t *testing.T) {
	for _, driver := range storetest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			rounds := 20
			if driver == DriverPostgres {
				rounds = 5 // a database each: slower to make than a file
			}
			testConcurrentOpen(t, driver, rounds)
		})
	}
}

func testConcurrentOpen(t *testing.T, driver string, rounds int) {
	ctx := context.Background()
	ms := storetest.Migrations(t, driver)
	const n = 4
	for round := range rounds {
		db := kit.Empty(t, driver)
		stores := make([]*Store, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				stores[i], errs[i] = open(ctx, db, nil)
			})
		}
		close(start)
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Errorf("round %d: Open %d: %v", round, i, errs[i])
			}
		}
		if errs[0] == nil {
			if c := storetest.CountRows(t, stores[0].db.Read(), "SELECT COUNT(*) FROM schema_version"); c != len(ms) {
				t.Errorf("round %d: schema_version rows = %d, want %d (each migration exactly once)", round, c, len(ms))
			}
		}
		for i := range n {
			if stores[i] != nil {
				if err := stores[i].Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}
		}
		if t.Failed() {
			return
		}
	}
}

// TestOpenErrors: SQLite only (file paths); PostgreSQL's are in
// TestOpenPostgresErrors.
func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not a database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path string
		is   error // if non-nil, errors.Is target
	}{
		{"empty path", "", ErrInvalidArgument},
		{"parent is a file", filepath.Join(notDir, "bridge.db"), nil},
		{"not a database", garbage, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(ctx, tt.path, nil)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("error = %v, want %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), "open store") {
				t.Fatalf("error %q lacks context", err)
			}
		})
	}
}

func TestCloseTwice(t *testing.T) {
	for _, driver := range storetest.Drivers() {
		t.Run(driver, func(t *testing.T) { testCloseTwice(t, kit.Empty(t, driver)) })
	}
}

func testCloseTwice(t *testing.T, db storetest.DB) {
	s, err := open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("first Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.SchemaVersion(context.Background()); err == nil {
		t.Fatal("query after Close succeeded")
	}
}
