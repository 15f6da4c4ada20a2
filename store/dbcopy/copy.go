// Package dbcopy copies an installation's database from one store to
// another (bridge migrate-store: SQLite to PostgreSQL and back): every row
// of every table, in one transaction, ids and times kept.
package dbcopy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentbridge/agentbridge/store/sqldb"
)

// ErrTargetNotEmpty: Copy's target already holds data.
var ErrTargetNotEmpty = errors.New("target database is not empty")

// TableCount is how many rows Copy copied into one table.
type TableCount struct {
	Table string
	Rows  int64
}

// Copy copies every row of every table of from into to, which must be
// another store at the same schema version with no rows in any table
// (ErrTargetNotEmpty otherwise; schema_version excepted). Search indexes
// are not copied: the target builds its own from the copied rows (SQLite's
// FTS4 triggers, PostgreSQL's expression index). It reads from
// one snapshot of from and writes to in one transaction: on any error
// nothing is left in to. Ids, sequence numbers and times are kept as they
// are, and to's own id sequences continue after the copied ones. It
// returns the rows copied per table, in copy order. from should not be
// written meanwhile (the caller holds its data_dir lock).
func Copy(ctx context.Context, from, to *sqldb.DB) ([]TableCount, error) {
	fv, err := from.SchemaVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("copy store: source: %w", err)
	}
	tv, err := to.SchemaVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("copy store: target: %w", err)
	}
	if fv != tv {
		return nil, fmt.Errorf("copy store: source schema version %d, target %d (open both with the same bridge first)", fv, tv)
	}
	tables, err := copyOrder(ctx, from, to)
	if err != nil {
		return nil, fmt.Errorf("copy store: %w", err)
	}
	src, err := from.Read().BeginTx(ctx, from.Dialect().Snapshot())
	if err != nil {
		return nil, fmt.Errorf("copy store: read source: %w", err)
	}
	defer src.Rollback() //nolint:errcheck // read-only: nothing to keep
	var counts []TableCount
	err = to.WithTx(ctx, func(tx *sql.Tx) error {
		for _, t := range tables {
			var n int64
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+sqldb.QuoteIdent(t)).Scan(&n); err != nil {
				return fmt.Errorf("count %s: %w", t, err)
			}
			if n > 0 {
				return fmt.Errorf("table %s has %d rows: %w", t, n, ErrTargetNotEmpty)
			}
		}
		for _, t := range tables {
			n, err := copyTable(ctx, src, tx, t)
			if err != nil {
				return fmt.Errorf("table %s: %w", t, err)
			}
			if err := to.Dialect().AfterCopy(ctx, tx, t); err != nil {
				return fmt.Errorf("table %s: %w", t, err)
			}
			counts = append(counts, TableCount{t, n})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("copy store from %s to %s: %w", from.Driver(), to.Driver(), err)
	}
	return counts, nil
}

// copyOrder returns the tables to copy: the same set in both stores
// (schema_version aside), conversations — the one table others refer to —
// first, the rest by name.
func copyOrder(ctx context.Context, from, to *sqldb.DB) ([]string, error) {
	ft, err := tableNames(ctx, from)
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	tt, err := tableNames(ctx, to)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	if !slices.Equal(ft, tt) {
		return nil, fmt.Errorf("the databases have different tables (source %s; target %s)", strings.Join(ft, ", "), strings.Join(tt, ", "))
	}
	slices.SortStableFunc(ft, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == "conversations":
			return -1
		case b == "conversations":
			return 1
		}
		return 0
	})
	return ft, nil
}

// tableNames lists s's tables by name, schema_version and search indexes
// (Dialect.IndexTable) left out.
func tableNames(ctx context.Context, s *sqldb.DB) ([]string, error) {
	rows, err := s.QueryContext(ctx, s.Dialect().Tables())
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	names, err := sqldb.Collect(rows, func(r sqldb.Scanner) (string, error) {
		var n string
		err := r.Scan(&n)
		return n, err
	})
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	return slices.DeleteFunc(names, func(n string) bool { return n == "schema_version" || s.Dialect().IndexTable(n) }), nil
}

// copyTable copies every row of table from src to dst, column by column
// with the target's column types, and returns how many.
func copyTable(ctx context.Context, src, dst *sql.Tx, table string) (int64, error) {
	types, err := columnTypes(ctx, dst, table)
	if err != nil {
		return 0, fmt.Errorf("target columns: %w", err)
	}
	srcCols, err := columnTypes(ctx, src, table)
	if err != nil {
		return 0, fmt.Errorf("source columns: %w", err)
	}
	cols := make([]string, 0, len(types))
	for _, c := range srcCols {
		cols = append(cols, c.name)
	}
	if want := colNames(types); !slices.Equal(slices.Sorted(slices.Values(cols)), slices.Sorted(slices.Values(want))) {
		return 0, fmt.Errorf("different columns (source %s; target %s)", strings.Join(cols, ", "), strings.Join(want, ", "))
	}
	byName := make(map[string]string, len(types))
	for _, c := range types {
		byName[c.name] = c.dbType
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = sqldb.QuoteIdent(c)
	}
	list := strings.Join(quoted, ", ")
	ins, err := dst.PrepareContext(ctx, `INSERT INTO `+sqldb.QuoteIdent(table)+` (`+list+`) VALUES (`+
		strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")+`)`)
	if err != nil {
		return 0, fmt.Errorf("prepare insert: %w", err)
	}
	defer ins.Close()
	rows, err := src.QueryContext(ctx, `SELECT `+list+` FROM `+sqldb.QuoteIdent(table))
	if err != nil {
		return 0, fmt.Errorf("read: %w", err)
	}
	defer rows.Close()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var n int64
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, fmt.Errorf("read row %d: %w", n+1, err)
		}
		for i, c := range cols {
			if vals[i], err = convertFor(byName[c], vals[i]); err != nil {
				return n, fmt.Errorf("row %d column %s: %w", n+1, c, err)
			}
		}
		if _, err := ins.ExecContext(ctx, vals...); err != nil {
			return n, fmt.Errorf("write row %d: %w", n+1, err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("read: %w", err)
	}
	return n, nil
}

type column struct{ name, dbType string }

func colNames(cs []column) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.name
	}
	return out
}

// columnTypes returns table's columns and their declared types (upper
// case) as tx's driver reports them.
func columnTypes(ctx context.Context, tx *sql.Tx, table string) ([]column, error) {
	rows, err := tx.QueryContext(ctx, `SELECT * FROM `+sqldb.QuoteIdent(table)+` LIMIT 0`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	out := make([]column, len(cts))
	for i, ct := range cts {
		out[i] = column{ct.Name(), strings.ToUpper(ct.DatabaseTypeName())}
	}
	return out, rows.Err()
}

// convertFor converts v, as read from the source, to what a column of
// dbType on the target takes: text as string, binary as []byte, integers
// as int64, reals as float64. NULL stays NULL.
func convertFor(dbType string, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch dbType {
	case "TEXT", "VARCHAR":
		switch x := v.(type) {
		case []byte:
			return string(x), nil
		case string:
			return x, nil
		}
	case "BLOB", "BYTEA":
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		}
	case "INTEGER", "BIGINT", "INT8", "INT4":
		switch x := v.(type) {
		case int64:
			return x, nil
		case int32:
			return int64(x), nil
		case bool:
			return int64(sqldb.BoolInt(x)), nil
		}
	case "REAL", "FLOAT8", "DOUBLE PRECISION":
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			return float64(x), nil
		}
	}
	return nil, fmt.Errorf("cannot store %T in a %s column", v, dbType)
}
