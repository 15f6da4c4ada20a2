package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/migrations"
	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestOpenPostgresMigratesEmptyDatabase: the PostgreSQL counterpart of
// TestOpenMigratesEmptyDatabase — every migration recorded once, the
// tables there, foreign keys enforced.
func TestOpenPostgresMigratesEmptyDatabase(t *testing.T) {
	ctx := context.Background()
	s, err := open(ctx, kit.Empty(t, DriverPostgres), nil)
	if err != nil {
		t.Fatalf("OpenPostgres: %v", err)
	}
	defer s.Close()
	if s.Driver() != DriverPostgres {
		t.Errorf("Driver() = %q", s.Driver())
	}
	ms := storetest.Migrations(t, DriverPostgres)
	if v, err := s.SchemaVersion(ctx); err != nil || v != migrations.Latest(ms) {
		t.Fatalf("schema version %d, %v; want %d", v, err, migrations.Latest(ms))
	}
	if n := storetest.CountRows(t, s.db.Read(), "SELECT COUNT(*) FROM schema_version"); n != len(ms) {
		t.Fatalf("schema_version rows = %d, want %d", n, len(ms))
	}
	for _, table := range []string{"schema_version", "conversations", "inbox", "outbox", "approvals", "usage", "grants",
		"web_messages", "web_uploads", "schedules", "web_sessions"} {
		if !tableExists(t, s, table) {
			t.Errorf("table %s missing", table)
		}
	}
	_, err = s.db.Read().Exec(`INSERT INTO inbox (id, conversation_id, bot, platform_msg_id, created_at, updated_at)
		VALUES ('x', 'no-such-conversation', 'b', 'm', 0, 0)`)
	if pe := (*pgconn.PgError)(nil); !errors.As(err, &pe) || pe.Code != "23503" {
		t.Fatalf("insert with dangling conversation: err = %v, want a foreign key violation", err)
	}
}

// TestOpenPostgresErrors: a bad DSN or an unreachable server is an error
// that names the problem and never repeats the password.
func TestOpenPostgresErrors(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name, dsn string
		is        error
	}{
		{"empty", "", ErrInvalidArgument},
		{"unparsable", "postgres://bridge:s3cret-pw@host:notaport/db", ErrInvalidArgument},
		{"no server", "host=" + t.TempDir() + " user=bridge password=s3cret-pw dbname=x connect_timeout=2", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := OpenPostgres(ctx, tt.dsn, nil)
			if err == nil {
				s.Close()
				t.Fatal("OpenPostgres succeeded")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error = %v, want %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), "open") || strings.Contains(err.Error(), "s3cret-pw") {
				t.Errorf("error %q: want context and no password", err)
			}
		})
	}
}

// TestHoldOwnerNamesOnlyThisDatabase: advisory locks are per database, and
// pg_locks shows every database's: a refusal names the holder of this
// database only, not a bridge holding another database of the server.
func TestHoldOwnerNamesOnlyThisDatabase(t *testing.T) {
	ctx := context.Background()
	hold := func(db storetest.DB, app string) *Store {
		t.Helper()
		db.Where += " application_name=" + app // a key=value DSN (pgtest)
		s, err := open(ctx, db, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	dbA, dbB := kit.Empty(t, DriverPostgres), kit.Empty(t, DriverPostgres)
	for _, h := range []struct {
		db  storetest.DB
		app string
	}{{dbB, "bridge-of-b"}, {dbA, "bridge-of-a"}} {
		o, err := hold(h.db, h.app).HoldOwner(ctx)
		if err != nil {
			t.Fatalf("%s: HoldOwner: %v", h.app, err)
		}
		t.Cleanup(func() { o.Release() })
	}
	_, err := hold(dbA, "second-on-a").HoldOwner(ctx)
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "bridge-of-a") || strings.Contains(err.Error(), "bridge-of-b") {
		t.Fatalf("second HoldOwner on a: err = %v, want ErrInUse naming bridge-of-a only", err)
	}
}

// TestHoldOwner: one bridge per PostgreSQL database — a second HoldOwner
// is refused naming the first (its host and pid) until the first releases;
// SQLite stores hold nothing (their data_dir lock does).
func TestHoldOwner(t *testing.T) {
	ctx := context.Background()
	db := kit.Empty(t, DriverPostgres)
	a, err := open(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := open(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	first, err := a.HoldOwner(ctx)
	if err != nil {
		t.Fatalf("first HoldOwner: %v", err)
	}
	_, err = b.HoldOwner(ctx)
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("second HoldOwner: err = %v, want ErrInUse naming this process", err)
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	if err := first.Release(); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	second, err := b.HoldOwner(ctx)
	if err != nil {
		t.Fatalf("HoldOwner after the release: %v", err)
	}
	if err := second.Release(); err != nil {
		t.Fatal(err)
	}
	lite := kit.Open(t, DriverSQLite)
	for range 2 {
		o, err := lite.HoldOwner(ctx)
		if err != nil || o.Release() != nil {
			t.Fatalf("SQLite HoldOwner: %v", err)
		}
	}
}

// TestPostgresIdleInTransactionTimeout: the store's sessions are ended by
// the server when they sit inside a transaction for longer than
// IdleInTransactionTimeout (a frozen replica must not hold a lease row's
// lock, and with it every take-over, for as long as it is frozen).
func TestPostgresIdleInTransactionTimeout(t *testing.T) {
	ctx := context.Background()
	s, err := open(ctx, kit.Empty(t, DriverPostgres), nil)
	if err != nil {
		t.Fatalf("OpenPostgres: %v", err)
	}
	defer s.Close()
	var got string
	if err := s.db.Read().QueryRowContext(ctx, `SHOW idle_in_transaction_session_timeout`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != sqldb.IdleInTransactionTimeout {
		t.Errorf("idle_in_transaction_session_timeout = %q, want %q", got, sqldb.IdleInTransactionTimeout)
	}
}
