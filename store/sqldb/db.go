package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/migrations"
	"github.com/jackc/pgx/v5"
	"github.com/mattn/go-sqlite3" // also registers the "sqlite3" driver
)

// SQLiteParams are the connection settings every connection of a SQLite
// pool gets. _stmt_cache_size keeps each connection's prepared statements
// instead of preparing them anew for every call (BenchmarkBridgeOverhead,
// A/B: 3.3 → 2.95 ms per message, user CPU −20%; see BENCHMARKS.md
// "Store").
const SQLiteParams = "_foreign_keys=on&_journal_mode=WAL&_busy_timeout=5000&_synchronous=FULL&_txlock=immediate&_stmt_cache_size=128"

// DB is the bridge database handle every repository of the store shares.
// Create it with Open or OpenPostgres; it is safe for concurrent use.
// Close it when done.
//
// Writes go through one connection (w): SQLite has a single writer, and
// with many goroutines writing at once its busy handler (sleep and retry)
// starved some of them past the busy timeout ("database is locked") — with
// 100 conversations talking at once, one write in ten failed. Waiting for
// the one writer connection in the pool instead queues writers without a
// timeout, with messages being accepted first (writeGate). Reads use their
// own connections (db) and, in WAL mode, never wait for the writer.
type DB struct {
	d      Dialect         // SQLite or PostgreSQL (dialect.go)
	db     *sql.DB         // reads
	w      *sql.DB         // writes and transactions: at most one connection
	gate   *writeGate      // who writes next (see writegate.go); shared with Guarded copies
	health *writeHealth    // whether writes fail for want of space (health.go); shared likewise
	guard  Guard           // checked in every write transaction (Guarded); nil: none
	path   string          // the SQLite database file; "" for PostgreSQL
	pg     *pgx.ConnConfig // PostgreSQL's connection settings; nil for SQLite
	logger *slog.Logger
	now    func() time.Time
}

// Options are what Open and OpenPostgres need besides where the database is.
type Options struct {
	// Migrations are the schema migrations to apply, ordered, versions
	// 1..n (migrations.List or migrations.ListPostgres; a prefix of them
	// in tests of upgrades).
	Migrations []migrations.Migration
	// Logger may be nil (discards).
	Logger *slog.Logger
	// Params replaces SQLiteParams (tests); "" = SQLiteParams.
	Params string
}

// Open opens (creating if needed) the SQLite database at path, creating its
// parent directory, and applies every migration of opt the file does not
// have yet, each in its own transaction. Opening an up-to-date database
// changes nothing. A database whose schema is newer than the newest
// migration is refused with an error wrapping ErrSchemaTooNew.
func Open(ctx context.Context, path string, opt Options) (*DB, error) {
	if path == "" {
		return nil, fmt.Errorf("open store: empty path: %w", ErrInvalidArgument)
	}
	params := opt.Params
	if params == "" {
		params = SQLiteParams
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("open store %s: create directory: %w", path, err)
	}
	db, err := sql.Open("sqlite3", DSN(path, params))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	w, err := sql.Open("sqlite3", DSN(path, params))
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open store %s: %w", path, err), db.Close())
	}
	w.SetMaxOpenConns(1)
	s := newDB(sqliteDialect{}, db, w, path, opt.Logger)
	if err := s.init(ctx, opt.Migrations); err != nil {
		return nil, errors.Join(fmt.Errorf("open store %s: %w", path, err), db.Close(), w.Close())
	}
	return s, nil
}

// newDB returns a DB on the read pool db and the one-connection write pool
// w of dialect d. logger may be nil.
func newDB(d Dialect, db, w *sql.DB, path string, logger *slog.Logger) *DB {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &DB{d: d, db: db, w: w, gate: &writeGate{}, health: &writeHealth{}, path: path, logger: logger, now: time.Now}
}

// Driver returns the database: DriverSQLite or DriverPostgres.
func (s *DB) Driver() string { return s.d.Name() }

// Dialect returns what differs between the two databases' SQL.
func (s *DB) Dialect() Dialect { return s.d }

// Logger returns the store's logger (never nil).
func (s *DB) Logger() *slog.Logger { return s.logger }

// PGConfig returns a copy of the PostgreSQL connection settings, for
// connections of their own outside the pools (LISTEN); nil for SQLite.
func (s *DB) PGConfig() *pgx.ConnConfig {
	if s.pg == nil {
		return nil
	}
	return s.pg.Copy()
}

// Read returns the read pool. Writes go through Exec and WithTx.
func (s *DB) Read() *sql.DB { return s.db }

// QueryContext runs a query on the read pool.
func (s *DB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return s.db.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a query returning at most one row on the read pool.
func (s *DB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return s.db.QueryRowContext(ctx, query, args...)
}

// initRetries bounds how often init retries after SQLITE_BUSY (about 5 s in
// total with initBackoff).
const (
	initRetries = 50
	initBackoff = 100 * time.Millisecond
)

// init checks the connection settings and migrates, retrying while the file
// is busy: switching a fresh file to WAL needs an exclusive lock, and SQLite
// reports SQLITE_BUSY without waiting when two connections race for it (two
// processes starting on a new file). Every step of initOnce is idempotent.
func (s *DB) init(ctx context.Context, ms []migrations.Migration) error {
	for attempt := 1; ; attempt++ {
		err := s.initOnce(ctx, ms)
		if err == nil || !isBusy(err) || attempt >= initRetries {
			return err
		}
		s.logger.DebugContext(ctx, "database busy during open, retrying", "attempt", attempt, "err", err)
		t := time.NewTimer(min(time.Duration(attempt)*10*time.Millisecond, initBackoff))
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
}

// isBusy reports whether err is SQLITE_BUSY or SQLITE_LOCKED, or a
// PostgreSQL serialization failure, deadlock or lock timeout: another
// process held what this one needed, and the same step may succeed again.
func isBusy(err error) bool {
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked
	}
	switch pgCode(err) {
	case pgSerializationFailure, pgDeadlockDetected, pgLockNotAvailable:
		return true
	}
	return false
}

func (s *DB) initOnce(ctx context.Context, ms []migrations.Migration) error {
	if err := s.d.checkConn(ctx, s.db); err != nil {
		return err
	}
	return s.migrate(ctx, ms)
}

// DSN builds the go-sqlite3 URI for path with params. SQLite decodes %XX
// escapes in URI file names and go-sqlite3 splits parameters at the first
// '?', so '%', '?' and '#' in the path are escaped.
func DSN(path, params string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return "file:" + esc + "?" + params
}

// Close closes the database. Calls after the first return nil.
func (s *DB) Close() error {
	if err := errors.Join(s.db.Close(), s.w.Close()); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}

// WithTx runs fn in a write transaction (SQLite: BEGIN IMMEDIATE, from the
// DSN) and commits it when fn returns nil; otherwise it rolls back and
// returns fn's error. fn must do all its work through tx: another write
// of the store from inside it waits for the same writer (a deadlock).
func (s *DB) WithTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return s.WithTxClass(ctx, false, fn)
}

// WithTxClass is WithTx for an urgent (see writeGate) or a normal write.
// An error because the database cannot be written wraps ErrFull.
func (s *DB) WithTxClass(ctx context.Context, urgent bool, fn func(tx *sql.Tx) error) error {
	err := s.runTx(ctx, urgent, fn)
	if ctx.Err() != nil && err != nil {
		return err // cancelled: says nothing about the disk
	}
	return s.NoteWrite(err)
}

func (s *DB) runTx(ctx context.Context, urgent bool, fn func(tx *sql.Tx) error) error {
	if err := s.gate.lock(ctx, urgent); err != nil {
		return fmt.Errorf("begin transaction: wait for the writer: %w", err)
	}
	defer s.gate.unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	if s.guard != nil {
		fn = guarded(ctx, s.guard, fn)
	}
	if err := fn(tx); err != nil {
		if rbErr := tx.Rollback(); rbErr != nil && !errors.Is(rbErr, sql.ErrTxDone) {
			return errors.Join(err, fmt.Errorf("rollback: %w", rbErr))
		}
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Now reads the store clock (time.Now unless SetClock replaced it).
func (s *DB) Now() time.Time { return s.now() }

// NowMS returns the store clock as Unix milliseconds, the schema's time unit.
func (s *DB) NowMS() int64 { return s.now().UnixMilli() }

// SetClock replaces the clock the store stamps rows with (tests). Call it
// before the store is used concurrently, and before Guarded: a guarded
// copy keeps the clock it was made with.
func (s *DB) SetClock(now func() time.Time) { s.now = now }
