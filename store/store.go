package store

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
	"github.com/mattn/go-sqlite3" // also registers the "sqlite3" driver
)

// dsnParams are the connection settings every connection of the pool gets.
// _stmt_cache_size keeps each connection's prepared statements instead of
// preparing them anew for every call (BenchmarkBridgeOverhead, A/B: 3.3 →
// 2.95 ms per message, user CPU −20%; see BENCHMARKS.md "Store").
const dsnParams = "_foreign_keys=on&_journal_mode=WAL&_busy_timeout=5000&_synchronous=FULL&_txlock=immediate&_stmt_cache_size=128"

// Store is the bridge database. Create it with Open; it is safe for
// concurrent use. Close it when done.
//
// Writes go through one connection (w): SQLite has a single writer, and
// with many goroutines writing at once its busy handler (sleep and retry)
// starved some of them past the busy timeout ("database is locked") — with
// 100 conversations talking at once, one write in ten failed. Waiting for
// the one writer connection in the pool instead queues writers without a
// timeout, with messages being accepted first (writeGate). Reads use their
// own connections (db) and, in WAL mode, never wait for the writer.
type Store struct {
	d      dialect     // SQLite or PostgreSQL (dialect.go)
	db     *sql.DB     // reads
	w      *sql.DB     // writes and transactions: at most one connection
	gate   writeGate   // who writes next (see writegate.go)
	health writeHealth // whether writes fail for want of space (health.go)
	path   string      // the SQLite database file; "" for PostgreSQL
	sig    signaler    // Notify and Listen (signals.go)
	logger *slog.Logger
	now    func() time.Time

	pruneBatch int // rows per Prune transaction; defaultPruneBatch
}

// Open opens (creating if needed) the SQLite database at path, creating its
// parent directory, and applies every embedded migration the file does not
// have yet, each in its own transaction. Opening an up-to-date database
// changes nothing. A database whose schema is newer than this binary knows is
// refused with an error wrapping ErrSchemaTooNew. logger may be nil.
func Open(ctx context.Context, path string, logger *slog.Logger) (*Store, error) {
	ms, err := migrations.List()
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return open(ctx, path, logger, ms)
}

func open(ctx context.Context, path string, logger *slog.Logger, ms []migrations.Migration) (*Store, error) {
	return openParams(ctx, path, logger, ms, dsnParams)
}

// openParams is open with other connection parameters (tests).
func openParams(ctx context.Context, path string, logger *slog.Logger, ms []migrations.Migration, params string) (*Store, error) {
	if path == "" {
		return nil, fmt.Errorf("open store: empty path: %w", ErrInvalidArgument)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("open store %s: create directory: %w", path, err)
	}
	db, err := sql.Open("sqlite3", dsn(path, params))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	w, err := sql.Open("sqlite3", dsn(path, params))
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open store %s: %w", path, err), db.Close())
	}
	w.SetMaxOpenConns(1)
	s := newStore(sqliteDialect{}, db, w, path, logger)
	if err := s.init(ctx, ms); err != nil {
		return nil, errors.Join(fmt.Errorf("open store %s: %w", path, err), db.Close(), w.Close())
	}
	return s, nil
}

// newStore returns a Store on the read pool db and the one-connection
// write pool w of dialect d. logger may be nil.
func newStore(d dialect, db, w *sql.DB, path string, logger *slog.Logger) *Store {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Store{d: d, db: db, w: w, path: path, sig: newLocalSignals(), logger: logger, now: time.Now, pruneBatch: defaultPruneBatch}
}

// Driver returns the store's database: DriverSQLite or DriverPostgres.
func (s *Store) Driver() string { return s.d.name() }

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
func (s *Store) init(ctx context.Context, ms []migrations.Migration) error {
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

func (s *Store) initOnce(ctx context.Context, ms []migrations.Migration) error {
	if err := s.d.checkConn(ctx, s.db); err != nil {
		return err
	}
	return s.migrate(ctx, ms)
}

// dsn builds the go-sqlite3 URI for path. SQLite decodes %XX escapes in URI
// file names and go-sqlite3 splits parameters at the first '?', so '%', '?'
// and '#' in the path are escaped.
func dsn(path, params string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	return "file:" + esc + "?" + params
}

// Close closes the database. Calls after the first return nil.
func (s *Store) Close() error {
	if err := errors.Join(s.db.Close(), s.w.Close()); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}

// withTx runs fn in a transaction (BEGIN IMMEDIATE, from the DSN) and commits
// it when fn returns nil; otherwise it rolls back and returns fn's error.
func (s *Store) withTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return s.withTxClass(ctx, false, fn)
}

// withTxClass is withTx for an urgent (see writeGate) or a normal write.
// An error because the database cannot be written wraps ErrFull.
func (s *Store) withTxClass(ctx context.Context, urgent bool, fn func(tx *sql.Tx) error) error {
	err := s.runTx(ctx, urgent, fn)
	if ctx.Err() != nil && err != nil {
		return err // cancelled: says nothing about the disk
	}
	return s.noteWrite(err)
}

func (s *Store) runTx(ctx context.Context, urgent bool, fn func(tx *sql.Tx) error) error {
	if err := s.gate.lock(ctx, urgent); err != nil {
		return fmt.Errorf("begin transaction: wait for the writer: %w", err)
	}
	defer s.gate.unlock()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
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

// nowMS returns the store clock as Unix milliseconds, the schema's time unit.
func (s *Store) nowMS() int64 { return s.now().UnixMilli() }

// fromMS converts a stored Unix-millisecond time to a UTC time.Time.
func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// rowsAffected returns how many rows res changed.
func rowsAffected(res sql.Result) (int64, error) {
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("rows affected: %w", err)
	}
	return n, nil
}

// insertErr wraps an INSERT error, mapping a UNIQUE violation to ErrDuplicate.
func insertErr(err error) error {
	var se sqlite3.Error
	if (errors.As(err, &se) && (se.ExtendedCode == sqlite3.ErrConstraintUnique || se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey)) ||
		pgCode(err) == pgUniqueViolation {
		return fmt.Errorf("insert: %w: %w", ErrDuplicate, err)
	}
	return fmt.Errorf("insert: %w", err)
}

// boolInt is b as the schema stores flags: 1 or 0 (INTEGER in both
// databases, so that one set of statements serves both).
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
