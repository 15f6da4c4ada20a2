package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStartCPUProfile: -cpuprofile writes a profile when stopped, private
// to the bridge's user, and a path that cannot be written is an error.
func TestStartCPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bridge.cpu")
	stop, err := startCPUProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	st, err := os.Stat(path)
	if err != nil || st.Size() == 0 || st.Mode().Perm() != 0o600 {
		t.Fatalf("profile %s: %v, %v", path, st, err)
	}
	if _, err := startCPUProfile(filepath.Join(t.TempDir(), "missing", "bridge.cpu")); err == nil {
		t.Error("a profile in a missing directory started")
	}
}
