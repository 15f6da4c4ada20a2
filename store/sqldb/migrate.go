package sqldb

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/agentbridge/agentbridge/migrations"
)

// SchemaVersion returns the database's schema version: the highest applied
// migration, 0 for an empty database.
func (s *DB) SchemaVersion(ctx context.Context) (int, error) {
	v, err := schemaVersion(ctx, s.db)
	if err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	return v, nil
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func schemaVersion(ctx context.Context, q queryer) (int, error) {
	var v int
	if err := q.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema_version: %w", err)
	}
	return v, nil
}

// migrate brings the schema up to the newest of ms (ordered, versions 1..n).
// Each migration runs in its own transaction together with its version row,
// and the version is re-read inside that transaction, so two processes
// opening the same database at once apply each migration exactly once
// (SQLite: BEGIN IMMEDIATE; PostgreSQL: an advisory lock per transaction).
// The version table itself is created first, the same way: it lives here,
// not in a migration, because the version must be readable before any
// migration runs.
func (s *DB) migrate(ctx context.Context, ms []migrations.Migration) error {
	err := s.WithTx(ctx, func(tx *sql.Tx) error {
		if err := s.d.lockSchema(ctx, tx); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, s.d.versionTable())
		return err
	})
	if err != nil {
		return fmt.Errorf("create schema_version: %w", err)
	}
	current, err := schemaVersion(ctx, s.db)
	if err != nil {
		return err
	}
	latest := migrations.Latest(ms)
	if current > latest {
		return fmt.Errorf("database schema version %d, this binary knows up to %d (upgrade the bridge): %w",
			current, latest, ErrSchemaTooNew)
	}
	for _, m := range ms {
		if m.Version <= current {
			continue
		}
		applied := false
		err := s.WithTx(ctx, func(tx *sql.Tx) error {
			if err := s.d.lockSchema(ctx, tx); err != nil {
				return err
			}
			v, err := schemaVersion(ctx, tx)
			if err != nil {
				return err
			}
			if v >= m.Version {
				return nil // applied concurrently by another process
			}
			if v != m.Version-1 {
				return fmt.Errorf("schema version %d, cannot apply %s", v, m.Name)
			}
			if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
				return fmt.Errorf("run: %w", err)
			}
			if _, err := tx.ExecContext(ctx,
				"INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
				m.Version, m.Name, s.NowMS()); err != nil {
				return fmt.Errorf("record version: %w", err)
			}
			applied = true
			return nil
		})
		if err != nil {
			return fmt.Errorf("migration %s: %w", m.Name, err)
		}
		if applied {
			s.logger.InfoContext(ctx, "applied database migration", "version", m.Version, "name", m.Name)
		}
	}
	return nil
}
