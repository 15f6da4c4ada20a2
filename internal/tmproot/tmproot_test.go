package tmproot

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// logTo gives a logger that writes into buf.
func logTo(buf *bytes.Buffer) *slog.Logger { return slog.New(slog.NewTextHandler(buf, nil)) }

// fill puts what an agent may leave in its temporary directory into dir:
// nested files, a FIFO, a 1 GiB sparse file and a link to a directory
// outside (with a file in it), which it returns: removal must not follow it.
func fill(t *testing.T, dir string) (outside string) {
	t.Helper()
	agent := filepath.Join(dir, "agent-1")
	deeper := filepath.Join(agent, "cc-socks", "deeper")
	if err := os.MkdirAll(deeper, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(deeper, "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(agent, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	sparse, err := os.Create(filepath.Join(agent, "sparse"))
	if err == nil {
		err = sparse.Truncate(1 << 30)
		sparse.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	outside = t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "keep"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(agent, "link")); err != nil {
		t.Fatal(err)
	}
	return outside
}

func exists(t *testing.T, p string) bool {
	t.Helper()
	_, err := os.Lstat(p)
	return err == nil
}

// TestOpenAndClose: a root is made in parent and recorded in data_dir;
// Close removes the root with what agents left in it, and the record.
func TestOpenAndClose(t *testing.T) {
	data, parent := t.TempDir(), t.TempDir()
	r, err := Open(data, parent, nil)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(r.Dir()) != parent || !strings.HasPrefix(filepath.Base(r.Dir()), Prefix) {
		t.Fatalf("root %s: want %s/%s…", r.Dir(), parent, Prefix)
	}
	rec, err := os.ReadFile(filepath.Join(data, RecordName))
	if err != nil || strings.TrimSpace(string(rec)) != r.Dir() {
		t.Fatalf("record %q (%v), want %s", rec, err, r.Dir())
	}
	outside := fill(t, r.Dir())
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(t, r.Dir()) || exists(t, filepath.Join(data, RecordName)) {
		t.Fatalf("after Close: root there %v, record there %v", exists(t, r.Dir()), exists(t, filepath.Join(data, RecordName)))
	}
	if !exists(t, filepath.Join(outside, "keep")) {
		t.Errorf("removing the root followed a link and removed %s", filepath.Join(outside, "keep"))
	}
}

// TestLeftoverRemoved: a bridge that never closed its root (killed) leaves
// it; the next Open on the same data_dir removes it and records its own.
func TestLeftoverRemoved(t *testing.T) {
	data, parent := t.TempDir(), t.TempDir()
	killed, err := Open(data, parent, nil)
	if err != nil {
		t.Fatal(err)
	}
	outside := fill(t, killed.Dir())
	var logs bytes.Buffer
	next, err := Open(data, parent, logTo(&logs))
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if exists(t, killed.Dir()) {
		t.Fatalf("the killed bridge's root %s is still there; logs:\n%s", killed.Dir(), logs.String())
	}
	if !exists(t, next.Dir()) || next.Dir() == killed.Dir() {
		t.Fatalf("new root %s (old %s) not made", next.Dir(), killed.Dir())
	}
	if !exists(t, filepath.Join(outside, "keep")) {
		t.Errorf("removing the leftover followed a link and removed %s", filepath.Join(outside, "keep"))
	}
	if !strings.Contains(logs.String(), "removed the agents' temporary directory an earlier run left") {
		t.Errorf("the removal is not logged:\n%s", logs.String())
	}
	rec, _ := os.ReadFile(filepath.Join(data, RecordName))
	if strings.TrimSpace(string(rec)) != next.Dir() {
		t.Errorf("record %q, want %s", rec, next.Dir())
	}
}

// TestRecordNotARoot: a record that names anything but a root of this user
// (a restored data_dir, an edited file) never removes what it names.
func TestRecordNotARoot(t *testing.T) {
	parent := t.TempDir()
	precious := filepath.Join(parent, "precious")
	if err := os.MkdirAll(precious, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(precious, "keep"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(parent, Prefix+"link")
	if err := os.Symlink(precious, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(parent, Prefix+"file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ record, why string }{
		{precious, "not named"},
		{link, "not a directory"},
		{file, "not a directory"},
		{"relative/" + Prefix + "x", "not a clean absolute path"},
		{parent + "/x/../" + Prefix + "y", "not a clean absolute path"},
	} {
		data := t.TempDir()
		if err := os.WriteFile(filepath.Join(data, RecordName), []byte(tc.record+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		r, err := Open(data, parent, logTo(&logs))
		if err != nil {
			t.Fatalf("%s: %v", tc.record, err)
		}
		if !strings.Contains(logs.String(), "left alone") || !strings.Contains(logs.String(), tc.why) {
			t.Errorf("record %s: logs do not say it is left alone (%s):\n%s", tc.record, tc.why, logs.String())
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{filepath.Join(precious, "keep"), link, file} {
		if !exists(t, p) {
			t.Errorf("%s was removed", p)
		}
	}
}

// TestLeftoverGone: a recorded root removed meanwhile (a reboot emptied
// /tmp) is no error and no warning.
func TestLeftoverGone(t *testing.T) {
	data, parent := t.TempDir(), t.TempDir()
	gone := filepath.Join(parent, Prefix+"gone")
	if err := os.WriteFile(filepath.Join(data, RecordName), []byte(gone+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	r, err := Open(data, parent, logTo(&logs))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("a root gone already is warned about:\n%s", logs.String())
	}
}

// TestOpenFailsClearly: a data_dir the record cannot be written into is an
// error that names it, and no root is left behind.
func TestOpenFailsClearly(t *testing.T) {
	parent := t.TempDir()
	data := filepath.Join(t.TempDir(), "missing")
	_, err := Open(data, parent, nil)
	if err == nil || !strings.Contains(err.Error(), data) {
		t.Fatalf("err = %v, want one naming %s", err, data)
	}
	if left, _ := os.ReadDir(parent); len(left) != 0 {
		t.Errorf("a failed Open left %v in %s", left, parent)
	}
}
