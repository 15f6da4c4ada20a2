package uploads

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/core/sessiondir"
)

// TestSaveUploadNeverFollowsPlantedLinks: the uploads directory lies in the
// session state the agent writes. A link it planted where the directory or
// the file will be must not make the bridge write a person's upload outside
// (over the bridge's own files, say), and a redelivered upload replaces its
// earlier copy.
func TestSaveUploadNeverFollowsPlantedLinks(t *testing.T) {
	outside := t.TempDir() // stands for data_dir, the config, the bridge's HOME
	victim := filepath.Join(outside, "bridge.yaml")
	if err := os.WriteFile(victim, []byte("secret: keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T) {
		t.Helper()
		if b, _ := os.ReadFile(victim); string(b) != "secret: keep" {
			t.Fatalf("file outside the session changed: %q", b)
		}
		if ents, _ := os.ReadDir(outside); len(ents) != 1 {
			t.Fatalf("files appeared outside the session: %v", ents)
		}
	}

	t.Run("file link", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "sess", sessiondir.Uploads)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		planted := filepath.Join(dir, "m1-notes.txt")
		if err := os.Symlink(victim, planted); err != nil {
			t.Fatal(err)
		}
		path, err := Save(dir, "m1", "notes.txt", []byte("uploaded"))
		if err != nil {
			t.Fatal(err)
		}
		check(t)
		if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("upload is not a regular file: %v %v", fi, err)
		}
		if b, _ := os.ReadFile(path); string(b) != "uploaded" {
			t.Fatalf("upload holds %q", b)
		}
	})
	t.Run("directory link", func(t *testing.T) {
		sess := filepath.Join(t.TempDir(), "sess")
		if err := os.MkdirAll(sess, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(sess, sessiondir.Uploads)); err != nil {
			t.Fatal(err)
		}
		if _, err := Save(filepath.Join(sess, sessiondir.Uploads), "m2", "x.txt", []byte("uploaded")); err == nil {
			t.Fatal("saved through a link leading out of the session")
		}
		check(t)
	})
	t.Run("redelivery replaces", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "sess", sessiondir.Uploads)
		for _, body := range []string{"first", "second"} {
			path, err := Save(dir, "m3", "a.txt", []byte(body))
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(path); string(b) != body {
				t.Fatalf("upload holds %q, want %q", b, body)
			}
		}
	})
}
