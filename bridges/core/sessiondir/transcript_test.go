package sessiondir

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHasTranscript: a regular transcript file counts, a link or another
// session's file does not.
func TestHasTranscript(t *testing.T) {
	dir := t.TempDir()
	const id = "0b7c2f4e-7a43-4c55-9a53-2b5b3c1d9e10"
	if HasTranscript(dir, id) || HasTranscript(filepath.Join(dir, "missing"), id) {
		t.Fatal("an empty state directory has a transcript")
	}
	proj := filepath.Join(dir, "claude", "projects", "-work-x")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(outside, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(proj, id+".jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "other.jsonl"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if HasTranscript(dir, id) {
		t.Error("a link counts as a transcript")
	}
	if err := os.Remove(filepath.Join(proj, id+".jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, id+".jsonl"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !HasTranscript(dir, id) {
		t.Error("the transcript is not found")
	}
}
