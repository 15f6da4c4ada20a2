// Package dirlock gives one process sole ownership of a directory: an
// exclusive flock(2) on a lock file inside it, which holds the owner's pid
// for whoever is refused. The kernel releases the lock when the owner's
// file is closed or the process ends, however it ends, so the file a
// killed process leaves behind blocks nobody.
package dirlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// FileName is the lock file's name in the directory.
const FileName = "bridge.lock"

// pidReadTries and pidReadPause bound waiting for the owner's pid when the
// owner has just taken the lock and not yet written it.
const (
	pidReadTries = 20
	pidReadPause = 10 * time.Millisecond
)

// Lock is a held directory lock. Release ends it; so does the process's
// end. The lock file is not inherited by child processes (close-on-exec).
type Lock struct {
	f    *os.File
	path string
}

// HeldError reports a directory another process owns.
type HeldError struct {
	Dir string // the directory
	PID int    // the owner's pid; 0 when it could not be read
}

func (e *HeldError) Error() string {
	if e.PID == 0 {
		return fmt.Sprintf("%s is locked by another process (pid unknown; see %s)", e.Dir, filepath.Join(e.Dir, FileName))
	}
	return fmt.Sprintf("%s is locked by process %d", e.Dir, e.PID)
}

// Acquire creates dir if needed (mode 0750) and takes its lock without
// waiting. It returns a *HeldError when another process holds it (also
// through another open file of this process), or another error when the
// lock cannot be taken at all.
func Acquire(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	held, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if held {
		pid := ownerPID(f)
		f.Close()
		return nil, &HeldError{Dir: dir, PID: pid}
	}
	if err := writePID(f); err != nil {
		f.Close() // releases the lock
		return nil, fmt.Errorf("write pid into %s: %w", path, err)
	}
	return &Lock{f: f, path: path}, nil
}

// Release empties the lock file (its pid is no longer the owner) and
// releases the lock. The file stays: removing it could let two processes
// lock two different files of the same name.
func (l *Lock) Release() error {
	terr := l.f.Truncate(0)
	cerr := l.f.Close()
	if err := errors.Join(terr, cerr); err != nil {
		return fmt.Errorf("release %s: %w", l.path, err)
	}
	return nil
}

// writePID replaces the file's content with this process's pid.
func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// ownerPID reads the owner's pid from the lock file, waiting briefly for
// an owner that has just taken the lock to write it; 0 when there is none.
func ownerPID(f *os.File) int {
	buf := make([]byte, 32)
	for range pidReadTries {
		n, _ := f.ReadAt(buf, 0)
		if pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n]))); err == nil && pid > 0 {
			return pid
		}
		time.Sleep(pidReadPause)
	}
	return 0
}
