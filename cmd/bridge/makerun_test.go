package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/app"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// makeRun is `make run` running in a fresh copy of this checkout.
type makeRun struct {
	dir  string // the copy: Makefile, sources, no bridge.yaml, no bin/, no .tools
	cmd  *exec.Cmd
	out  *testkit.SyncBuffer // make's and the bridge's stdout and stderr
	done chan struct{}
}

// startMakeRun copies the checkout (tracked and untracked files that git
// does not ignore: what a clean clone plus the working tree's changes
// holds) into a temp dir and runs `make run` there with env on top of a
// minimal environment that has no Anthropic credential. The Go build
// reuses this machine's build and module caches with GOPROXY=off, and
// TOOLS points at a directory holding only the claude CLI found on PATH,
// so nothing is downloaded. Make and the bridge run in their own process
// group; the test's cleanup stops them with SIGTERM and checks the bridge
// stopped gracefully. It skips (fails under CI) when make, git or a
// claude of the Makefile's pinned version is missing.
func startMakeRun(t *testing.T, env ...string) *makeRun {
	t.Helper()
	claude := testkit.RequireClaude(t)
	for _, tool := range []string{"make", "git", "go", "bwrap"} { // without bwrap, make would install it
		if _, err := exec.LookPath(tool); err != nil {
			needOrSkip(t, tool+" is not on PATH")
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	want := pinnedCLIVersion(t, root)
	if got, err := exec.Command(claude, "--version").Output(); err != nil || !strings.HasPrefix(string(got), want+" ") {
		needOrSkip(t, "claude on PATH is "+strings.TrimSpace(string(got))+", the Makefile pins "+want+" (make would download it)")
	}

	dir := t.TempDir()
	copyCheckout(t, root, filepath.Join(dir, "clone"))
	tools := filepath.Join(dir, "tools")
	if err := os.MkdirAll(filepath.Join(tools, "node_modules", ".bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(claude, filepath.Join(tools, "node_modules", ".bin", "claude")); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}

	m := &makeRun{dir: filepath.Join(dir, "clone"), out: &testkit.SyncBuffer{}, done: make(chan struct{})}
	m.cmd = exec.Command("make", "run", "TOOLS="+tools)
	m.cmd.Dir = m.dir
	m.cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8", "GOTOOLCHAIN=local", "GOPROXY=off",
		"GOCACHE=" + goEnv(t, "GOCACHE"), "GOMODCACHE=" + goEnv(t, "GOMODCACHE"), "GOPATH=" + goEnv(t, "GOPATH"),
	}, env...)
	m.cmd.Stdout, m.cmd.Stderr = m.out, m.out
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := m.cmd.Start(); err != nil {
		t.Fatalf("make run: %v", err)
	}
	go func() { _ = m.cmd.Wait(); close(m.done) }()
	t.Cleanup(func() {
		m.stop(t)
		if t.Failed() {
			t.Logf("make run output:\n%s", m.out)
		}
	})
	return m
}

// stop sends SIGTERM to make and the bridge and waits until every process
// of the group is gone; the bridge must log its graceful stop.
func (m *makeRun) stop(t *testing.T) {
	t.Helper()
	pgid := m.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.Now().Add(app.ShutdownGrace + 30*time.Second)
	for syscall.Kill(-pgid, 0) == nil { // some process of the group is still there
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			t.Errorf("make run did not stop within %v of SIGTERM", app.ShutdownGrace+30*time.Second)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	<-m.done
	if out := m.out.String(); strings.Contains(out, "bridge starting") && !strings.Contains(out, "bridge stopped") {
		t.Errorf("the bridge did not stop gracefully on SIGTERM")
	}
}

// waitOutput waits until the output matches re and returns the submatches;
// it fails when make exits first or after timeout.
func (m *makeRun) waitOutput(t *testing.T, re *regexp.Regexp, timeout time.Duration) []string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		if sm := re.FindStringSubmatch(m.out.String()); sm != nil {
			return sm
		}
		select {
		case <-m.done:
			if sm := re.FindStringSubmatch(m.out.String()); sm != nil {
				return sm
			}
			t.Fatalf("make run exited (%v) before printing %s", m.cmd.ProcessState, re)
		case <-deadline:
			t.Fatalf("make run did not print %s within %v", re, timeout)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// needOrSkip skips the test, or fails it under CI.
func needOrSkip(t *testing.T, why string) {
	t.Helper()
	testkit.SkipOrFail(t, "%s", why)
}

// pinnedCLIVersion reads CLAUDE_VERSION from the Makefile.
func pinnedCLIVersion(t *testing.T, root string) string {
	t.Helper()
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^CLAUDE_VERSION\s*:=\s*(\S+)`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("no CLAUDE_VERSION in the Makefile")
	}
	return string(m[1])
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// copyCheckout copies the files git lists as tracked or untracked-but-not-
// ignored under root into dst (files deleted in the working tree are left
// out, symlinks are copied as links).
func copyCheckout(t *testing.T, root, dst string) {
	t.Helper()
	ls := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	ls.Dir = root
	out, err := ls.Output()
	if err != nil {
		needOrSkip(t, "not a git checkout: "+err.Error())
	}
	n := 0
	for _, name := range bytes.Split(out, []byte{0}) {
		if len(name) == 0 {
			continue
		}
		src, to := filepath.Join(root, string(name)), filepath.Join(dst, string(name))
		fi, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := copyFile(src, to, fi); err != nil {
			t.Fatalf("copy %s: %v", name, err)
		}
		n++
	}
	if n == 0 {
		t.Fatal("git lists no files")
	}
}

func copyFile(src, dst string, fi os.FileInfo) error {
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
