package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// bridgeBin is the `bridge` binary built once by TestMain for end-to-end tests.
var bridgeBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bridge-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bridgeBin = filepath.Join(dir, "bridge")
	build := exec.Command("go", "build", "-o", bridgeBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build bridge:", err)
		os.Exit(1)
	}
	code := m.Run()
	closeBrowser()
	if err := sharedPG.Stop(); err != nil { // postgres_test.go
		fmt.Fprintln(os.Stderr, err)
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// freeAddr returns a loopback address with a free port.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// bridgeProc is a running `bridge run` child process.
type bridgeProc struct {
	killed  bool // killed on purpose: the cleanup expects no clean exit
	cmd     *exec.Cmd
	addr    string
	dir     string
	logs    *testkit.SyncBuffer
	done    chan struct{}
	exitErr error
	scrapes atomic.Int64 // GET /metrics by the test (metricsOrEmpty)
}

// agentBridge is a bridge binary whose agent profile "coder" runs the real
// Claude Code CLI against a fake model.
type agentBridge struct {
	dir, cfg string
	env      []string
	model    *fakemodel.Server
	bridge   *bridgeProc
	workdir  string
}

// startAgentBridge starts the fake model and the bridge with the given bots
// section (YAML text starting with "bots:"); env is the bridge's environment.
func startAgentBridge(t testing.TB, bots string, env ...string) agentBridge {
	t.Helper()
	return startAgentBridgeWith(t, profileOptions{}, bots, env...)
}

// profileOptions vary the "coder" profile of an agent bridge.
type profileOptions struct {
	workdirIsConfigDir bool              // workdir: the directory of bridge.yaml and data/ (the worst case)
	extra              string            // more profile keys, each line indented by four spaces
	maxLive            int               // max_live; 0 = 4
	dataDir            string            // data_dir; "" = ./data next to bridge.yaml
	plan               fakemodel.Planner // how the fake model answers; nil = its directive scripts
	env                []string          // more agent environment (KEY=value)
	top                string            // more top-level keys after bots (YAML lines, unindented), e.g. a store section
	command            string            // the profile's command; "" = the claude CLI on PATH
}

// startAgentBridgeWith is startAgentBridge with a varied profile.
func startAgentBridgeWith(t testing.TB, po profileOptions, bots string, env ...string) agentBridge {
	t.Helper()
	claude := testkit.RequireClaude(t)
	dir := t.TempDir()
	home, workdir := filepath.Join(dir, "agent-home"), filepath.Join(dir, "work")
	if po.workdirIsConfigDir {
		workdir = dir
	}
	for _, d := range []string{home, workdir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var fm *fakemodel.Server
	if po.plan == nil {
		fm = fakemodel.New(t)
	} else {
		var err error
		if fm, err = fakemodel.StartWith(fakemodel.Options{Logger: slog.New(slog.DiscardHandler), Plan: po.plan}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(fm.Close)
	}
	dataDir := cmp.Or(po.dataDir, "./data")
	cfg := fmt.Sprintf("data_dir: %q\nlog: { level: debug, format: text }\nhttp: { listen: \"{{HTTP}}\" }\nagents:\n", dataDir) +
		agentYAML(cmp.Or(po.command, claude), home, workdir, append(fm.Env(), po.env...), po.maxLive) + po.extra + bots + po.top
	return agentBridge{dir: dir, cfg: cfg, env: env, model: fm, bridge: startBridge(t, dir, cfg, env...), workdir: workdir}
}

// restart starts the bridge again on the same config and data directory.
func (ab *agentBridge) restart(t testing.TB) {
	t.Helper()
	ab.bridge = startBridge(t, ab.dir, ab.cfg, ab.env...)
}

// agentYAML renders an agent profile pointing the real CLI at a fake model.
func agentYAML(claude, home, workdir string, env []string, maxLive int) string {
	if maxLive <= 0 {
		maxLive = 4
	}
	var b strings.Builder
	fmt.Fprintf(&b, "  coder:\n    command: %q\n    home: %q\n    workdir: %q\n    idle_timeout: 10m\n    approval_timeout: 2m\n    max_live: %d\n", claude, home, workdir, maxLive)
	b.WriteString("    env:\n")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, "      %s: %q\n", k, v)
	}
	return b.String()
}

// startBridge writes cfg (with {{HTTP}} replaced by a free address) into a
// temp dir and runs the bridge binary there until the test ends, then stops
// it with SIGTERM and checks it exits 0. env is the bridge's own environment
// (besides PATH and HOME).
func startBridge(t testing.TB, dir, cfg string, env ...string) *bridgeProc {
	t.Helper()
	return startBridgeArgs(t, dir, cfg, nil, env...)
}

// startBridgeArgs is startBridge with extra arguments for `bridge run`.
func startBridgeArgs(t testing.TB, dir, cfg string, args []string, env ...string) *bridgeProc {
	t.Helper()
	addr := freeAddr(t)
	cfg = strings.ReplaceAll(cfg, "{{HTTP}}", addr)
	path := filepath.Join(dir, "bridge.yaml")
	testkit.WriteFile(t, path, cfg)
	p := &bridgeProc{addr: addr, dir: dir, logs: &testkit.SyncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bridgeBin, append([]string{"run", "-config", path}, args...)...)
	p.cmd.Dir = dir
	p.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}, env...)
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exitErr = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		if err := p.stop(60 * time.Second); err != nil {
			t.Errorf("bridge stop: %v\nlogs:\n%s", err, p.logs)
		}
		removeAgentLeftovers(dir) // what a SIGKILLed bridge left (cgroups_test.go)
		if t.Failed() {
			t.Logf("bridge logs:\n%s", p.logs)
		}
	})
	p.waitHealthy(t)
	return p
}

func (p *bridgeProc) waitHealthy(t testing.TB) {
	t.Helper()
	testkit.WaitUntilSeen(t, "a healthy bridge", 60*time.Second, func() (bool, string) {
		select {
		case <-p.done:
			t.Fatalf("bridge exited early: %v\nlogs:\n%s", p.exitErr, p.logs)
		default:
		}
		resp, err := http.Get("http://" + p.addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true, ""
			}
		}
		return false, fmt.Sprintf("/healthz: %v\nlogs:\n%s", statusOr(resp, err), p.logs)
	})
}

// statusOr is resp's status, or err when the request failed.
func statusOr(resp *http.Response, err error) string {
	if err != nil {
		return err.Error()
	}
	return resp.Status
}

// kill9 kills the bridge with SIGKILL (a crash) and waits for it.
func (p *bridgeProc) kill9() {
	p.killed = true
	_ = p.cmd.Process.Kill()
	<-p.done
}

// stop sends SIGTERM and waits; a non-zero exit is an error.
func (p *bridgeProc) stop(timeout time.Duration) error {
	select {
	case <-p.done:
		if p.killed {
			return nil
		}
		return p.exitErr
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return p.exitErr
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("bridge did not stop within %v after SIGTERM", timeout)
	}
}

// waitLog waits until the bridge's logs contain s.
func (p *bridgeProc) waitLog(ctx context.Context, s string) bool {
	for !strings.Contains(p.logs.String(), s) {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	return true
}

// ctxTimeout is a context that ends after d or with the test.
func ctxTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// metrics fetches the bridge's /metrics page.
func (p *bridgeProc) metrics(t *testing.T) string {
	t.Helper()
	resp, err := http.Get("http://" + p.addr + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: status %d, %v", resp.StatusCode, err)
	}
	return string(b)
}
