package sqldb

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestPostgresErrorMapping: PostgreSQL's SQLSTATEs map to the store's
// errors as SQLite's codes do.
func TestPostgresErrorMapping(t *testing.T) {
	pgErr := func(code string) error { return fmt.Errorf("exec: %w", &pgconn.PgError{Code: code, Message: "m"}) }
	if !IsFull(pgErr(pgDiskFull)) || !IsFull(pgErr(pgIOError)) || IsFull(pgErr(pgUniqueViolation)) {
		t.Error("IsFull: want disk_full and io_error only")
	}
	if !errors.Is(InsertErr(pgErr(pgUniqueViolation)), ErrDuplicate) || errors.Is(InsertErr(pgErr("23503")), ErrDuplicate) {
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

// TestDSNEscapesPath: SQLite only (its file URI).
func TestDSNEscapesPath(t *testing.T) {
	tests := []struct{ path, want string }{
		{"data/bridge.db", "file:data/bridge.db?" + SQLiteParams},
		{"/a b/c?d#e%f.db", "file:/a b/c%3fd%23e%25f.db?" + SQLiteParams},
	}
	for _, tt := range tests {
		if got := DSN(tt.path, SQLiteParams); got != tt.want {
			t.Errorf("DSN(%q, SQLiteParams) = %q, want %q", tt.path, got, tt.want)
		}
	}
}
