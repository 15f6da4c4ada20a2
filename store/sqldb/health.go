package sqldb

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/mattn/go-sqlite3"
)

// fullLogEvery is how often a store that cannot write logs that it cannot
// (once per period, not once per failed write).
const fullLogEvery = time.Minute

// WriteHealth says whether the database can be written: Full from the
// first write that failed for want of space (or an I/O error) until the
// next write that succeeds.
type WriteHealth struct {
	Full      bool
	Since     time.Time // when writes began to fail (zero when not Full)
	LastError string    // the last such failure (empty when not Full)
	Failures  int64     // writes that failed this way since the store opened
}

// IsFull reports whether err says the database or its directory cannot be
// written: SQLITE_FULL, an SQLite I/O error, PostgreSQL's disk_full (53100)
// or io_error (58030), or ENOSPC, EDQUOT or EROFS from the file system
// (wrapped or not). The store's own errors for such a write wrap ErrFull.
func IsFull(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrFull) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EROFS) {
		return true
	}
	var se sqlite3.Error
	if errors.As(err, &se) {
		return se.Code == sqlite3.ErrFull || se.Code == sqlite3.ErrIoErr
	}
	switch pgCode(err) {
	case pgDiskFull, pgIOError:
		return true
	}
	return false
}

// writeHealth tracks WriteHealth for a DB and logs the condition at
// most once per fullLogEvery. It is safe for concurrent use.
type writeHealth struct {
	mu        sync.Mutex
	h         WriteHealth
	lastLog   time.Time
	lastProbe time.Time // WriteHealth's last space probe
	sinceLog  int64     // failures since lastLog
}

// NoteWrite records the outcome of one write and returns err, wrapped with
// ErrFull when IsFull(err). A nil err ends the full condition. Exec and
// WithTx call it; a write made another way (a statement on the read pool)
// reports its outcome through it.
func (s *DB) NoteWrite(err error) error {
	w := s.health
	switch {
	case err == nil:
		w.mu.Lock()
		was, since := w.h.Full, w.h.Since
		w.h.Full, w.h.Since, w.h.LastError, w.sinceLog = false, time.Time{}, "", 0
		w.lastLog = time.Time{}
		w.mu.Unlock()
		if was {
			s.logger.Info("database writable again; accepting messages", "full_for", s.now().Sub(since).Round(time.Second))
		}
		return nil
	case !IsFull(err):
		return err
	}
	now := s.now()
	w.mu.Lock()
	if !w.h.Full {
		w.h.Full, w.h.Since = true, now
	}
	w.h.LastError = err.Error()
	w.h.Failures++
	w.sinceLog++
	logNow, n, since := now.Sub(w.lastLog) >= fullLogEvery, w.sinceLog, w.h.Since
	if logNow {
		w.lastLog, w.sinceLog = now, 0
	}
	w.mu.Unlock()
	if logNow {
		s.logger.Error("database cannot be written (disk full?): inbound messages are not acknowledged, so platforms send them again; "+
			"free space in data_dir, the bridge resumes by itself",
			slog.Time("since", since), slog.Int64("failed_writes", n), slog.String("err", err.Error()))
	}
	if errors.Is(err, ErrFull) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrFull, err)
}

// probeEvery bounds how often WriteHealth checks for free space while the
// database is full.
const probeEvery = 5 * time.Second

// probeSize is what the space probe writes: room for a few WAL frames.
const probeSize = 64 << 10

// WriteHealth returns whether the database can be written (see
// WriteHealth). While it is full, it also checks (at most every
// probeEvery) whether the SQLite database's directory has room again, so
// that the condition clears by itself even when no write comes; a write
// that still fails sets it again. (A PostgreSQL store has no directory to
// probe: its next successful write clears it.) It never blocks on the
// database.
func (s *DB) WriteHealth() WriteHealth {
	w := s.health
	w.mu.Lock()
	now := s.now()
	due := w.h.Full && now.Sub(w.lastProbe) >= probeEvery
	if due {
		w.lastProbe = now
	}
	h := w.h
	w.mu.Unlock()
	if !due || s.probeSpace() != nil {
		return h
	}
	_ = s.NoteWrite(nil)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.h
}

// errNoProbe: a PostgreSQL store has no local file to probe; the full
// condition ends with its next successful write.
var errNoProbe = errors.New("space probe: the database is not a local file")

// probeSpace writes, syncs and removes a small file next to the database.
func (s *DB) probeSpace() error {
	if s.path == "" {
		return errNoProbe
	}
	f, err := os.CreateTemp(filepath.Dir(s.path), ".space-probe-*")
	if err != nil {
		return fmt.Errorf("space probe: %w", err)
	}
	_, err = f.Write(make([]byte, probeSize))
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close(), os.Remove(f.Name()))
}
