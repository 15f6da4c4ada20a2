package dirlock

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A second owner of the directory is refused with the first's pid (an
// open file of its own conflicts even within one process); after Release
// the directory can be taken again.
func TestAcquireRefusesSecondOwner(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data") // created by Acquire
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(l.Path())
	if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("lock file holds %q (%v), want this pid", b, err)
	}
	_, err = Acquire(dir)
	var held *HeldError
	if !errors.As(err, &held) || held.PID != os.Getpid() || held.Dir != dir {
		t.Fatalf("second Acquire = %v, want a HeldError naming pid %d", err, os.Getpid())
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	defer l2.Release()
}

// A lock file left by a process that is gone (its pid still inside) does
// not block: only a held flock does.
func TestAcquireIgnoresStaleFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("999999999\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatalf("a stale lock file blocked: %v", err)
	}
	defer l.Release()
	b, _ := os.ReadFile(l.Path())
	if strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file holds %q, want this pid only", b)
	}
}

// An owner whose pid cannot be read is still an owner.
func TestHeldWithoutPID(t *testing.T) {
	dir := t.TempDir()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if err := os.Truncate(l.Path(), 0); err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(dir)
	var held *HeldError
	if !errors.As(err, &held) || held.PID != 0 || !strings.Contains(err.Error(), "pid unknown") {
		t.Fatalf("Acquire = %v, want a HeldError with an unknown pid", err)
	}
}

// Path is the lock file's path.
func (l *Lock) Path() string { return l.path }
