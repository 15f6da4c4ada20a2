package sandbox

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// usableBwrap skips without a working bubblewrap, except under CI
// where that is a failure.
func usableBwrap(t *testing.T) *Bwrap {
	t.Helper()
	b := &Bwrap{}
	if err := b.Check(context.Background()); err != nil {
		testkit.SkipOrFail(t, "bwrap unusable: %v", err)
	}
	return b
}

// shell returns bash's absolute path.
func shell(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not on PATH")
	}
	return p
}

// helperTree is a temp dir laid out like the bridge's: data_dir with a
// worktree in it, a config file, a repository and a file outside them all.
type helperTree struct {
	root, data, worktree, config, repo, outside string
}

func newHelperTree(t *testing.T) helperTree {
	t.Helper()
	root := t.TempDir()
	h := helperTree{root: root, data: filepath.Join(root, "data"), config: filepath.Join(root, "bridge.yaml"),
		repo: filepath.Join(root, "repo"), outside: filepath.Join(root, "outside.txt")}
	h.worktree = filepath.Join(h.data, "worktrees", "coder", "s1")
	for _, d := range []string{h.worktree, h.repo} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, content := range map[string]string{h.config: "token: xoxb-secret\n", h.outside: "outside\n",
		filepath.Join(h.data, "bridge.db"): "db", filepath.Join(h.repo, "README"): "readme\n",
		filepath.Join(h.worktree, "file.txt"): "agent file\n"} {
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// TestRunHelperBwrapView: a helper confined by bwrap reads what it is given
// read-only, writes only what it is given, and sees nothing else of the
// bridge — not data_dir around the worktree, not the config file, not the
// bridge's environment, not its HOME, not the network.
func TestRunHelperBwrapView(t *testing.T) {
	b := usableBwrap(t)
	sh := shell(t)
	tr := newHelperTree(t)
	t.Setenv("AGENTBRIDGE_TEST_SECRET", "leaked")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port

	script := `
probe() { if eval "$2" >/dev/null 2>&1; then echo "$1=yes"; else echo "$1=no"; fi; }
probe read_worktree 'cat ` + tr.worktree + `/file.txt'
probe write_worktree 'touch ` + tr.worktree + `/new'
probe read_repo 'cat ` + tr.repo + `/README'
probe write_repo 'touch ` + tr.repo + `/new'
probe read_db 'cat ` + tr.data + `/bridge.db'
probe read_config 'cat ` + tr.config + `'
probe read_outside 'cat ` + tr.outside + `'
probe write_home 'touch "$HOME/x" && test -z "$(ls -A "$HOME" | grep -v "^x$")"'
probe connect 'exec 3<>/dev/tcp/127.0.0.1/` + strconv.Itoa(port) + `'
echo "secret=${AGENTBRIDGE_TEST_SECRET:-unset}"
echo "env=$(env | cut -d= -f1 | sort | tr '\n' ,)"
`
	out, err := RunHelper(context.Background(), b, Helper{
		Argv: []string{sh, "-c", script},
		Dir:  tr.repo, Read: []string{tr.repo}, Write: []string{tr.worktree},
		Hide: []string{tr.data, tr.config},
		Env:  []string{"PATH=/usr/bin:/bin", "LC_ALL=C"},
	})
	if err != nil {
		t.Fatalf("RunHelper: %v", err)
	}
	got := string(out)
	for _, want := range []string{"read_worktree=yes", "write_worktree=yes", "read_repo=yes", "write_repo=no",
		"read_db=no", "read_config=no", "read_outside=no", "write_home=yes", "connect=no", "secret=unset"} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("helper output lacks %q:\n%s", want, got)
		}
	}
	// bash adds PWD, SHLVL and _ itself.
	if !strings.Contains(got, "env=HOME,LC_ALL,PATH,PWD,SHLVL,TMPDIR,_,\n") {
		t.Errorf("helper environment: %s", got)
	}
	if _, err := os.Stat(filepath.Join(tr.worktree, "new")); err != nil {
		t.Errorf("the write to the worktree did not land: %v", err)
	}
}

// TestRunHelperFailsClosed: no sandbox, a sandbox that cannot confine a
// helper, a missing bwrap and a path that leads into a hidden one through
// a symbolic link are refused, and nothing runs.
func TestRunHelperFailsClosed(t *testing.T) {
	sh := shell(t)
	tr := newHelperTree(t)
	canary := filepath.Join(tr.root, "ran")
	run := []string{sh, "-c", "touch " + canary}
	link, up := filepath.Join(tr.root, "link"), filepath.Join(tr.repo, "up")
	if err := os.Symlink(tr.data, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(tr.root, up); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		sb   Sandbox
		h    Helper
	}{
		{"no sandbox", nil, Helper{Argv: run, Dir: tr.repo}},
		{"unknown sandbox", otherSandbox{}, Helper{Argv: run, Dir: tr.repo}},
		{"missing bwrap", &Bwrap{Path: "/nonexistent/bwrap"}, Helper{Argv: run, Dir: tr.repo}},
		{"relative dir", None{}, Helper{Argv: run, Dir: "repo"}},
		{"link into data_dir", None{}, Helper{Argv: run, Dir: tr.repo, Read: []string{link}, Hide: []string{tr.data}}},
		{"link above data_dir", None{}, Helper{Argv: run, Dir: tr.repo, Write: []string{up}, Hide: []string{tr.data}}},
	}
	for _, tt := range tests {
		if _, err := RunHelper(context.Background(), tt.sb, tt.h); err == nil {
			t.Errorf("%s: RunHelper succeeded", tt.name)
		}
		if _, err := os.Stat(canary); err == nil {
			t.Fatalf("%s: the helper ran", tt.name)
		}
	}
}

// TestRunHelperOutput: the exit status is an *exec.ExitError with the
// helper's standard error; output beyond the limit fails the run.
func TestRunHelperOutput(t *testing.T) {
	sh := shell(t)
	dir := t.TempDir()
	_, err := RunHelper(context.Background(), None{}, Helper{Argv: []string{sh, "-c", "echo bad thing >&2; exit 3"}, Dir: dir})
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || !strings.Contains(err.Error(), "bad thing") {
		t.Errorf("err = %v, want exit status 3 with the message", err)
	}
	_, err = RunHelper(context.Background(), None{}, Helper{Argv: []string{sh, "-c", "head -c 17000000 /dev/zero"}, Dir: dir,
		Env: []string{"PATH=/usr/bin:/bin"}})
	if err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("err = %v, want the output limit", err)
	}
	out, err := RunHelper(context.Background(), None{}, Helper{Argv: []string{sh, "-c", `echo "$HOME" "$TMPDIR" "$(printenv PATH || echo nopath)"`}, Dir: dir})
	home, _, _ := strings.Cut(string(out), " ")
	if err != nil || !strings.Contains(home, "agentbridge-helper-") || !strings.HasSuffix(string(out), " nopath\n") {
		t.Errorf("None helper: %q, %v; want a private HOME and TMPDIR and no PATH", out, err)
	}
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Errorf("the helper's HOME %s is left behind: %v", home, err)
	}
}

// otherSandbox is a Sandbox RunHelper does not know.
type otherSandbox struct{ None }

func (otherSandbox) Name() string { return "other" }

// BenchmarkRunHelper: the cost of confining a helper (true), bwrap against
// none.
func BenchmarkRunHelper(b *testing.B) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip(err)
	}
	dir := b.TempDir()
	for _, sb := range []Sandbox{None{}, &Bwrap{}} {
		b.Run(sb.Name(), func(b *testing.B) {
			for b.Loop() {
				if _, err := RunHelper(context.Background(), sb, Helper{Argv: []string{truePath}, Dir: dir, Read: []string{dir}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
