//go:build linux

// Package tmpfstest gives tests a small file system of their own that
// they can fill up: a tmpfs mounted on a temporary directory (as root),
// and a filler file that takes every free byte until it is removed.
package tmpfstest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// Mount mounts a tmpfs of size bytes on a new temporary directory and
// unmounts it when the test ends. It skips the test when it cannot (not
// root, no mount permission) unless ci.Strict(): CI runs as root, where a
// test that cannot mount fails.
func Mount(t testing.TB, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if os.Geteuid() != 0 {
		skipOrFail(t, "mounting a tmpfs needs root")
	}
	opts := fmt.Sprintf("size=%d,mode=0755", size)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		skipOrFail(t, fmt.Sprintf("mount -t tmpfs: %v: %s", err, out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

func skipOrFail(t testing.TB, why string) {
	t.Helper()
	testkit.SkipOrFail(t, "%s (CI runs as root and must run this test)", why)
}

// Filler is a file that takes the free space of its file system.
type Filler struct{ path string }

// Fill writes a file in dir until the file system is full (ENOSPC) and
// returns it; Free removes it. Fill fails the test on any other error.
func Fill(t testing.TB, dir string) *Filler {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatalf("create filler: %v", err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for size := len(buf); size > 0; {
		if _, err := f.Write(buf[:size]); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("write filler: %v", err)
			}
			size /= 2 // take the last bytes too
		}
	}
	return &Filler{path: path}
}

// Free removes the filler: the space it took is free again.
func (f *Filler) Free(t testing.TB) {
	t.Helper()
	if err := os.Remove(f.path); err != nil {
		t.Fatalf("remove filler: %v", err)
	}
}
