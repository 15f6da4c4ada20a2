package sessiondir

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHasSessionACP: an ACP session's record (a regular, non-empty
// acp/session) counts as a session to resume; an empty record or a link
// does not; a Claude transcript still counts.
func TestHasSessionACP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const id = "0b7c2f4e-7a43-4c55-9a53-2b5b3c1d9e10"
	if HasSession(dir, id) || IsACP(dir) {
		t.Fatal("an empty state directory has a session")
	}
	rec := filepath.Join(dir, "acp", "session")
	if err := os.MkdirAll(filepath.Dir(rec), 0o700); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "session")
	if err := os.WriteFile(outside, []byte("fake-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, rec); err != nil {
		t.Fatal(err)
	}
	if HasSession(dir, id) {
		t.Error("a linked record counts")
	}
	if err := os.Remove(rec); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rec, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if HasSession(dir, id) {
		t.Error("an empty record counts")
	}
	if err := os.WriteFile(rec, []byte("fake-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !HasSession(dir, id) || !IsACP(dir) {
		t.Error("the ACP record is not found")
	}
	claude := t.TempDir()
	proj := filepath.Join(claude, "claude", "projects", "-w")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, id+".jsonl"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !HasSession(claude, id) || IsACP(claude) {
		t.Error("a Claude transcript: HasSession false or IsACP true")
	}
}

// TestCarriedACP: acp/ and home/ are carried, the caches and other
// subdirectories are not.
func TestCarriedACP(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"acp": true, "acp/session": true, "home": true, "home/.codex/sessions/x.jsonl": true, "home/.cachex": true,
		"home/.cache": false, "home/.cache/x": false, "home/.npm/_cacache": false, "home/w/node_modules": false,
		"home/node_modules/a/b": false, "claude/projects": false, "uploads/x": false, "homework": false, ".": false,
	} {
		if got := CarriedACP(p); got != want {
			t.Errorf("CarriedACP(%q) = %v, want %v", p, got, want)
		}
	}
}
