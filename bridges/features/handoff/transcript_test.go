package handoff

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

func TestProjectDirName(t *testing.T) {
	for in, want := range map[string]string{
		"/home/ana/src/project":  "-home-ana-src-project",
		"/tmp/my work.dir_x":     "-tmp-my-work-dir-x",
		"/srv/Proj2/Ünï😀x":       "-srv-Proj2--n---x", // as the pinned CLI names it
		"C:\\Users\\ana\\repo":   "C--Users-ana-repo",
		"/a/b-c/d.e":             "-a-b-c-d-e",
		"/already-dashed--twice": "-already-dashed--twice",
	} {
		if got := ProjectDirName(in); got != want {
			t.Errorf("ProjectDirName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTranscriptPathIsTheCLIs checks the layout against the pinned CLI:
// a session made in a directory (with spaces, dots, non-ASCII letters and
// an emoji in its name) is where TranscriptPath says, and a copy written
// by TranscriptPath for another directory and config dir is resumed there
// by plain `claude --resume`, with its history. (The CLI also finds a
// session under another directory's name of the same config dir, so the
// first check is the one that pins the name.)
func TestTranscriptPathIsTheCLIs(t *testing.T) {
	testkit.RequireClaude(t)
	fm := fakemodel.New(t)
	base := t.TempDir()
	run := func(dir, configDir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("claude", args...)
		cmd.Dir = dir
		cmd.Env = append(fm.Env(), "PATH="+os.Getenv("PATH"), "HOME="+base, "CLAUDE_CONFIG_DIR="+configDir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	const id = "11111111-2222-4333-8444-555555555555"
	first, second := filepath.Join(base, "first dir.x_y", "Ünï😀x"), filepath.Join(base, "other")
	for _, d := range []string{first, second} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg1, cfg2 := filepath.Join(base, "cfg1"), filepath.Join(base, "cfg2")
	run(first, cfg1, "-p", "remember kiwi", "--session-id", id)
	b, err := os.ReadFile(TranscriptPath(cfg1, first, id))
	if err != nil {
		t.Fatalf("the CLI's transcript is not where TranscriptPath says: %v", err)
	}
	p := TranscriptPath(cfg2, second, id)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := run(second, cfg2, "-p", "[echo-history] moved", "--resume", id); !strings.Contains(got, "history: remember kiwi") {
		t.Errorf("claude --resume in another directory did not continue the copy: %q", got)
	}
}

// TestReadTranscriptStaysInTheSessionState: the session's state is the
// agent's to write, so a transcript that is a link out of it (to the
// bridge's config, say) or not a regular file is never read.
func TestReadTranscriptStaysInTheSessionState(t *testing.T) {
	const id = "11111111-2222-4333-8444-555555555555"
	base := t.TempDir()
	secret := filepath.Join(base, "bridge.yaml")
	if err := os.WriteFile(secret, []byte("token: secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cli := filepath.Join(base, "sessions", id, "claude")
	dir := filepath.Join(cli, "projects", "-work")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, id+".jsonl")); err != nil {
		t.Fatal(err)
	}
	if b, err := readTranscript(cli, id); err == nil || strings.Contains(string(b), "secret") {
		t.Errorf("a planted link was read: %q, %v", b, err)
	}
	// A linked projects directory leading out of the state is not followed either.
	if err := os.RemoveAll(filepath.Join(cli, "projects")); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(base, "outside", "-work")
	if err := os.MkdirAll(outside, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, id+".jsonl"), []byte(`{"type":"user","sessionId":"x"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "outside"), filepath.Join(cli, "projects")); err != nil {
		t.Fatal(err)
	}
	if b, err := readTranscript(cli, id); err == nil {
		t.Errorf("a transcript behind a link out of the state was read: %q", b)
	}
	// A real transcript is read up to its last complete line.
	if err := os.Remove(filepath.Join(cli, "projects")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte("{\"a\":1}\n{\"b\":2}\n{\"partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := readTranscript(cli, id); err != nil || string(b) != "{\"a\":1}\n{\"b\":2}\n" {
		t.Errorf("readTranscript = %q, %v", b, err)
	}
	if _, err := readTranscript(cli, "22222222-2222-4333-8444-555555555555"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing transcript: %v, want ErrNotExist", err)
	}
}

func TestCheckTranscript(t *testing.T) {
	const id = "11111111-2222-4333-8444-555555555555"
	ok := `{"type":"summary"}` + "\n" + `{"type":"user","sessionId":"` + id + `"}` + "\n\n" + `{"type":"assistant","sessionId":"` + id + `"}` + "\n"
	if n, err := checkTranscript([]byte(ok), id); err != nil || n != 2 {
		t.Errorf("checkTranscript(good) = %d, %v; want 2 messages", n, err)
	}
	for name, in := range map[string]string{
		"not JSON":      "hello\n",
		"other session": `{"type":"user","sessionId":"99999999-2222-4333-8444-555555555555"}` + "\n",
		"no messages":   `{"type":"summary"}` + "\n",
		"empty":         "",
	} {
		if _, err := checkTranscript([]byte(in), id); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestSessionOfFile(t *testing.T) {
	for in, want := range map[string]string{
		"/x/11111111-2222-4333-8444-555555555555.jsonl": "11111111-2222-4333-8444-555555555555",
		"11111111-2222-4333-8444-555555555555.json":     "",
		"../../etc/passwd.jsonl":                        "",
		"/x/11111111-2222-4333-8444-55555555555X.jsonl": "",
		"/x/11111111222243338444555555555555.jsonl":     "", // not the canonical form
	} {
		if got := sessionOfFile(in); got != want {
			t.Errorf("sessionOfFile(%q) = %q, want %q", in, got, want)
		}
	}
}
