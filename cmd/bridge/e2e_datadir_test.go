package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// One owner per data directory (issue 23): a second bridge on the same
// data_dir, plain or in demo mode, exits 1 within a second naming the
// first one's pid, and the first keeps answering; the lock file a
// SIGKILLed bridge leaves behind does not stop the next start.
func TestDataDirOneOwner(t *testing.T) {
	t.Parallel()
	e := startSlackBridge(t)
	ts := e.slack.Mention(slackChan, alice, "hello", "")
	e.waitThreadText(t, ts, "pong: hello")
	pid := e.bridge.cmd.Process.Pid

	for _, args := range [][]string{{"run"}, {"run", "-demo"}} {
		started := time.Now()
		out, code := runSecondBridge(t, e.ab.dir, args...)
		took := time.Since(started)
		if code != exitRuntime {
			t.Errorf("second `bridge %s` exited %d, want %d; output:\n%s", strings.Join(args, " "), code, exitRuntime, out)
		}
		want := fmt.Sprintf("in use by another bridge (pid %d)", pid)
		if !strings.Contains(out, want) || !strings.Contains(out, "data_dir of its own") {
			t.Errorf("second `bridge %s` said %q; want %q and what to do", strings.Join(args, " "), out, want)
		}
		if took > 3*time.Second { // "within a second", with room for a loaded machine
			t.Errorf("second `bridge %s` took %v to exit", strings.Join(args, " "), took)
		}
	}
	e.slack.SendMessage(slackChan, alice, "still here?", ts)
	e.waitThreadText(t, ts, "pong: still here?")

	// A crash leaves the lock file with its pid; the kernel released the lock.
	e.bridge.kill9()
	lockFile := filepath.Join(e.ab.dir, "data", "bridge.lock")
	if b, err := os.ReadFile(lockFile); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(pid) {
		t.Fatalf("lock file after SIGKILL holds %q (%v), want the dead pid %d", b, err, pid)
	}
	e.ab.restart(t)
	e.bridge = e.ab.bridge
	e.slack.SendMessage(slackChan, alice, "after the crash", ts)
	// Answered on its own, or with the last message before the crash when
	// that turn had not been recorded as finished (re-delivered with it).
	e.waitThreadText(t, ts, "after the crash")
}

// runSecondBridge runs `bridge ARGS -config bridge.yaml` in dir (the
// config of a running bridge) and returns its output and exit code.
func runSecondBridge(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bridgeBin, append(args, "-config", filepath.Join(dir, "bridge.yaml"))...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "SLACK_BOT_TOKEN=x", "SLACK_APP_TOKEN=x"}
	timer := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("run a second bridge: %v", err)
	}
	return string(out), 0
}

// A listen address that is taken says which process holds it and how to
// choose another port; `make run` runs `bridge run -demo`, which says the
// same.
func TestListenAddressTaken(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	cfg := fmt.Sprintf("data_dir: ./data\nhttp: { listen: %q }\nagents:\n  coder:\n    sandbox: none\n"+
		"bots:\n  - name: console\n    platform: web\n    agent: coder\n", ln.Addr().String())
	testkit.WriteFile(t, filepath.Join(dir, "bridge.yaml"), cfg)
	out, code := runSecondBridge(t, dir, "run", "-demo")
	if code != exitRuntime {
		t.Fatalf("bridge run exited %d, want %d; output:\n%s", code, exitRuntime, out)
	}
	for _, want := range []string{
		fmt.Sprintf("http.listen %s is taken by process %d (", ln.Addr(), os.Getpid()),
		"choose another port with http.listen in " + filepath.Join(dir, "bridge.yaml"),
		"BRIDGE_LISTEN=127.0.0.1:8080 make run",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestMakeRunPortTaken: `make run` with its port taken by another process
// names that process and says how to choose another port, then exits.
func TestMakeRunPortTaken(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	m := startMakeRun(t, "BRIDGE_LISTEN="+ln.Addr().String())
	sm := m.waitOutput(t, regexp.MustCompile(`http\.listen \S+ is taken by process (\d+) `), makeRunStart)
	if sm[1] != strconv.Itoa(os.Getpid()) {
		t.Errorf("make run named pid %s, want the test's %d", sm[1], os.Getpid())
	}
	select {
	case <-m.done:
	case <-time.After(30 * time.Second):
		t.Fatal("make run kept running with its port taken")
	}
	if out := m.out.String(); !strings.Contains(out, "BRIDGE_LISTEN=127.0.0.1:8080 make run") || m.cmd.ProcessState.Success() {
		t.Errorf("make run (%v) did not say how to choose another port:\n%s", m.cmd.ProcessState, out)
	}
}
