package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mattn/go-sqlite3"
)

// Scanner is a row to scan: *sql.Row or *sql.Rows.
type Scanner interface{ Scan(dest ...any) error }

// Collect scans every row with scan and closes rows.
func Collect[T any](rows *sql.Rows, scan func(Scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("scan: %w", err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// FromMS converts a stored Unix-millisecond time to a UTC time.Time.
func FromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// RowsAffected returns how many rows res changed.
func RowsAffected(res sql.Result) (int64, error) {
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("rows affected: %w", err)
	}
	return n, nil
}

// AffectedOne returns nil when res changed a row, else an error wrapping
// ErrNotFound (or the driver's error).
func AffectedOne(res sql.Result) error {
	n, err := RowsAffected(res)
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// InsertErr wraps an INSERT error, mapping a UNIQUE violation to ErrDuplicate.
func InsertErr(err error) error {
	var se sqlite3.Error
	if (errors.As(err, &se) && (se.ExtendedCode == sqlite3.ErrConstraintUnique || se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey)) ||
		pgCode(err) == pgUniqueViolation {
		return fmt.Errorf("insert: %w: %w", ErrDuplicate, err)
	}
	return fmt.Errorf("insert: %w", err)
}

// BoolInt is b as the schema stores flags: 1 or 0 (INTEGER in both
// databases, so that one set of statements serves both).
func BoolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Prefixed qualifies each column of a comma-separated list with p.
func Prefixed(p, cols string) string {
	var out []byte
	start := true
	for i := 0; i < len(cols); i++ {
		c := cols[i]
		if start && c != ' ' && c != '\t' && c != '\n' {
			out = append(out, p...)
			start = false
		}
		out = append(out, c)
		if c == ',' {
			start = true
		}
	}
	return string(out)
}

// QuoteIdent quotes an SQL identifier taken from the schema.
func QuoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// DeleteBatched deletes the rows of table matching where, at most batch per
// transaction, until none is left, and returns how many it deleted (also
// on error). key is a unique column (the batch is chosen by it). table,
// key and where are constants of the caller, never user input.
func (s *DB) DeleteBatched(ctx context.Context, table, key, where string, args []any, batch int) (int64, error) {
	query := `DELETE FROM ` + table + ` WHERE ` + key + ` IN (SELECT ` + key + ` FROM ` + table +
		` WHERE ` + where + ` LIMIT ?)`
	args = append(args[:len(args):len(args)], batch)
	var total int64
	for {
		res, err := s.Exec(ctx, false, query, args...)
		if err != nil {
			return total, err
		}
		n, err := RowsAffected(res)
		if err != nil {
			return total, err
		}
		total += n
		if n < int64(batch) {
			return total, nil
		}
	}
}
