package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/migrations"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestOpenPostgresMigratesEmptyDatabase: the PostgreSQL counterpart of
// TestOpenMigratesEmptyDatabase — every migration recorded once, the
// tables there, foreign keys enforced.
func TestOpenPostgresMigratesEmptyDatabase(t *testing.T) {
	ctx := context.Background()
	s, err := emptyDB(t, DriverPostgres).open(ctx, nil)
	if err != nil {
		t.Fatalf("OpenPostgres: %v", err)
	}
	defer s.Close()
	if s.Driver() != DriverPostgres {
		t.Errorf("Driver() = %q", s.Driver())
	}
	ms := migrationsOf(t, DriverPostgres)
	if v, err := s.SchemaVersion(ctx); err != nil || v != migrations.Latest(ms) {
		t.Fatalf("schema version %d, %v; want %d", v, err, migrations.Latest(ms))
	}
	if n := countRows(t, s.db, "SELECT COUNT(*) FROM schema_version"); n != len(ms) {
		t.Fatalf("schema_version rows = %d, want %d", n, len(ms))
	}
	for _, table := range []string{"schema_version", "conversations", "inbox", "outbox", "approvals", "usage", "grants",
		"web_messages", "web_uploads", "schedules", "web_sessions"} {
		if !tableExists(t, s, table) {
			t.Errorf("table %s missing", table)
		}
	}
	_, err = s.db.Exec(`INSERT INTO inbox (id, conversation_id, bot, platform_msg_id, created_at, updated_at)
		VALUES ('x', 'no-such-conversation', 'b', 'm', 0, 0)`)
	if pgCode(err) != "23503" {
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

// TestPostgresErrorMapping: PostgreSQL's SQLSTATEs map to the store's
// errors as SQLite's codes do.
func TestPostgresErrorMapping(t *testing.T) {
	pgErr := func(code string) error { return fmt.Errorf("exec: %w", &pgconn.PgError{Code: code, Message: "m"}) }
	if !IsFull(pgErr(pgDiskFull)) || !IsFull(pgErr(pgIOError)) || IsFull(pgErr(pgUniqueViolation)) {
		t.Error("IsFull: want disk_full and io_error only")
	}
	if !errors.Is(insertErr(pgErr(pgUniqueViolation)), ErrDuplicate) || errors.Is(insertErr(pgErr("23503")), ErrDuplicate) {
		t.Error("insertErr: want ErrDuplicate for unique_violation only")
	}
	for _, code := range []string{pgSerializationFailure, pgDeadlockDetected, pgLockNotAvailable} {
		if !isBusy(pgErr(code)) {
			t.Errorf("isBusy(%s) = false", code)
		}
	}
	if isBusy(pgErr(pgDiskFull)) || isBusy(errors.New("x")) {
		t.Error("isBusy: true for an unrelated error")
	}
}

// TestRebind: '?' becomes $n and '?NNN' $NNN outside literals, quoted names
// and comments.
func TestRebind(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT 1":              "SELECT 1",
		"a = ? AND b IN (?, ?)": "a = $1 AND b IN ($2, $3)",
		`x = '?' AND "q?" = ? -- why?` + "\n AND ?": `x = '?' AND "q?" = $1 -- why?` + "\n AND $2",
		"x = 'it''s ?' AND y = ? /* ? */ AND z = ?": "x = 'it''s ?' AND y = $1 /* ? */ AND z = $2",
		"unterminated '?":                    "unterminated '?",
		"a = ?2 OR b = ?1 OR c = ?2":         "a = $2 OR b = $1 OR c = $2",
		"a = ?3 AND b = ? AND c LIKE ?10":    "a = $3 AND b = $4 AND c LIKE $10",
		"a = ? AND b = ?1 AND c = ? AND ?12": "a = $1 AND b = $1 AND c = $2 AND $12",
	} {
		if got := rebind(in); got != want {
			t.Errorf("rebind(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHoldOwner: one bridge per PostgreSQL database — a second HoldOwner
// is refused naming the first (its host and pid) until the first releases;
// SQLite stores hold nothing (their data_dir lock does).
func TestHoldOwner(t *testing.T) {
	ctx := context.Background()
	db := emptyDB(t, DriverPostgres)
	a, err := db.open(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := db.open(ctx, nil)
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
	lite := openTestDriver(t, DriverSQLite)
	for range 2 {
		o, err := lite.HoldOwner(ctx)
		if err != nil || o.Release() != nil {
			t.Fatalf("SQLite HoldOwner: %v", err)
		}
	}
}
