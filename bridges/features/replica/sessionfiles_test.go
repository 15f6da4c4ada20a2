package replica

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// writeTree writes files (path relative to dir: content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		f := filepath.Join(dir, filepath.FromSlash(p))
		testkit.Must(t, os.MkdirAll(filepath.Dir(f), 0o700))
		testkit.Must(t, os.WriteFile(f, []byte(content), 0o600))
	}
}

// archived lists the entries of a packSession archive and its layout.
func archived(t *testing.T, data []byte) (names []string, layout string) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
	slices.Sort(names)
	return names, zr.Comment
}

// filesUnder lists the regular files under dir (slash paths relative to it).
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestPackACPState: an ACP agent's state directory (acp/session present)
// is stored with its acp/ record and its private home/ — not the caches
// (home/.cache, home/.npm, node_modules), not links (to a host file, to
// another session's directory), not a FIFO, not the files outside acp/
// and home/ — and restored under the same subdirectories, replacing
// what is there.
func TestPackACPState(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	writeTree(t, src, map[string]string{
		"acp/session":                       "fake-1\n",
		"acp/cost":                          "0.5\n",
		"home/.fakeacp/fake-1.json":         `{"history":["hello"]}`,
		"home/.config/agent/settings.json":  "{}",
		"home/.cache/big/blob":              "cache",
		"home/.npm/_cacache/x":              "npm",
		"home/work/node_modules/left/index": "module",
		"home/node_modules/x":               "module",
		"claude/projects/p/s.jsonl":         "not the agent's",
		"uploads/photo.png":                 "upload",
	})
	hostSecret := filepath.Join(t.TempDir(), "secret")
	testkit.Must(t, os.WriteFile(hostSecret, []byte("host secret"), 0o600))
	other := t.TempDir() // another session's state dir
	writeTree(t, other, map[string]string{"home/.fakeacp/other.json": "other session"})
	testkit.Must(t, os.Symlink(hostSecret, filepath.Join(src, "home", "passwd")))
	testkit.Must(t, os.Symlink("/etc", filepath.Join(src, "home", "etc")))
	testkit.Must(t, os.Symlink(filepath.Join(other, "home"), filepath.Join(src, "home", "other")))
	testkit.Must(t, syscall.Mkfifo(filepath.Join(src, "home", "fifo"), 0o600))
	testkit.Must(t, os.WriteFile(filepath.Join(src, "home", "run.sh"), []byte("#!/bin/sh\n"), 0o700))

	data, err := packState(src)
	if err != nil {
		t.Fatal(err)
	}
	names, layout := archived(t, data)
	want := []string{"acp/cost", "acp/session", "home/.config/agent/settings.json", "home/.fakeacp/fake-1.json", "home/run.sh"}
	if !slices.Equal(names, want) || layout != layoutACP {
		t.Fatalf("packed %v (layout %q), want %v (layout %q)", names, layout, want, layoutACP)
	}

	dst := t.TempDir()
	writeTree(t, dst, map[string]string{"home/.fakeacp/fake-1.json": "older turn", "home/.cache/kept": "cache here"})
	testkit.Must(t, unpackSession(data, dst))
	for p, content := range map[string]string{"acp/session": "fake-1\n", "acp/cost": "0.5\n",
		"home/.fakeacp/fake-1.json": `{"history":["hello"]}`, "home/.cache/kept": "cache here"} {
		if b, err := os.ReadFile(filepath.Join(dst, p)); err != nil || string(b) != content {
			t.Errorf("restored %s = %q, %v; want %q", p, b, err, content)
		}
	}
	if info, err := os.Stat(filepath.Join(dst, "home", "run.sh")); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("an executable of the home restored as %v, %v; want mode 0700", info, err)
	}
	if got := filesUnder(t, dst); slices.Contains(got, "claude/projects/p/s.jsonl") || slices.Contains(got, "uploads/photo.png") {
		t.Errorf("files outside acp/ and home/ were carried: %v", got)
	}
}

// TestPackClaudeStateUnchanged: a Claude Code session's state directory
// (no acp/session) is stored exactly as before — its transcripts under
// claude/projects, named relative to it, no layout comment — even with a
// home/ and other files beside them; an archive earlier versions stored
// restores there.
func TestPackClaudeStateUnchanged(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	writeTree(t, src, map[string]string{
		"claude/projects/-work-x/s.jsonl": "transcript\n",
		"claude/settings.json":            "{}",
		"claude/todos/t.json":             "[]",
		"home/.bashrc":                    "not carried",
		"acp/cost":                        "0.5\n", // no record: not an ACP session
		"uploads/photo.png":               "upload",
	})
	data, err := packState(src)
	if err != nil {
		t.Fatal(err)
	}
	names, layout := archived(t, data)
	if !slices.Equal(names, []string{"-work-x/s.jsonl"}) || layout != layoutClaude {
		t.Fatalf("packed %v (layout %q), want only the transcript, named as before", names, layout)
	}

	// As earlier versions wrote it: a plain gzip'd tar of claude/projects.
	var old bytes.Buffer
	zw := gzip.NewWriter(&old)
	tw := tar.NewWriter(zw)
	testkit.Must(t, tw.WriteHeader(&tar.Header{Name: "-work-y/s.jsonl", Mode: 0o600, Size: 4, Typeflag: tar.TypeReg}))
	_, _ = tw.Write([]byte("old\n"))
	testkit.Must(t, errors.Join(tw.Close(), zw.Close()))
	dst := t.TempDir()
	testkit.Must(t, unpackSession(old.Bytes(), dst))
	if got := filesUnder(t, dst); !slices.Equal(got, []string{"claude/projects/-work-y/s.jsonl"}) {
		t.Errorf("an earlier archive restored as %v", got)
	}
}

// TestUnpackACPRefusesAndReplacesLinks: names outside acp/ and home/, or
// not clean, are refused; links this replica's copy of the state holds
// (to a directory outside, to the acp/ record inside) are replaced by
// directories, so nothing is written through them.
func TestUnpackACPRefusesAndReplacesLinks(t *testing.T) {
	t.Parallel()
	archive := func(names ...string) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Comment = layoutACP
		tw := tar.NewWriter(zw)
		for _, n := range names {
			testkit.Must(t, tw.WriteHeader(&tar.Header{Name: n, Mode: 0o600, Size: 7, Typeflag: tar.TypeReg}))
			_, _ = tw.Write([]byte("fake-2\n"))
		}
		testkit.Must(t, errors.Join(tw.Close(), zw.Close()))
		return buf.Bytes()
	}
	for _, bad := range []string{"../escape", "home/../../escape", "claude/settings.json", "uploads/x", "home/.cache/x", "/etc/passwd"} {
		if err := unpackSession(archive(bad), t.TempDir()); err == nil || !strings.Contains(err.Error(), "refused entry") {
			t.Errorf("entry %q: %v, want it refused", bad, err)
		}
	}

	dst, outside := t.TempDir(), t.TempDir()
	writeTree(t, dst, map[string]string{"acp/session": "fake-1\n"})
	testkit.Must(t, os.MkdirAll(filepath.Join(dst, "home"), 0o700))
	testkit.Must(t, os.Symlink(outside, filepath.Join(dst, "home", ".fakeacp")))
	testkit.Must(t, os.Symlink("../acp", filepath.Join(dst, "home", "rec")))
	testkit.Must(t, unpackSession(archive("home/rec/session"), dst))
	if b, _ := os.ReadFile(filepath.Join(dst, "acp", "session")); string(b) != "fake-1\n" {
		t.Errorf("restore wrote the acp record through a link in the home: %q", b)
	}
	testkit.Must(t, unpackSession(archive("home/.fakeacp/fake-2.json"), dst))
	if ents, _ := os.ReadDir(outside); len(ents) > 0 {
		t.Errorf("restore wrote through a link out of the state dir: %v", ents)
	}
	want := []string{"acp/session", "home/.fakeacp/fake-2.json", "home/rec/session"}
	if got := filesUnder(t, dst); !slices.Equal(got, want) {
		t.Errorf("restored %v, want %v", got, want)
	}
}

// TestPackOverCap: a home over 64 MiB (a sparse file costs no disk) is
// not packed: an error, so nothing is stored.
func TestPackOverCap(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	writeTree(t, src, map[string]string{"acp/session": "fake-1\n"})
	testkit.Must(t, os.MkdirAll(filepath.Join(src, "home"), 0o700))
	f, err := os.Create(filepath.Join(src, "home", "huge"))
	testkit.Must(t, err)
	testkit.Must(t, f.Truncate(maxSessionBytes))
	testkit.Must(t, f.Close())
	if data, err := packState(src); err == nil || data != nil {
		t.Fatalf("a home over the cap was packed (%d bytes, %v)", len(data), err)
	}
}
