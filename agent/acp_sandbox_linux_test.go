//go:build linux

package agent

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/mcprelay"
	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/agent/sandbox/egress"
	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestACPSandboxEgressCgroup: an ACP agent runs inside the same sandbox,
// egress gate and cgroup as the Claude Code CLI (one code path): a
// command the agent was allowed to run cannot read the bridge's hidden
// files or another session's state, cannot reach an unlisted loopback
// service, cannot rewrite the bridge's record of its session id, and runs
// in the session's cgroup; the agent's HOME is private to the session.
func TestACPSandboxEgressCgroup(t *testing.T) {
	testkit.NeedBwrap(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not on PATH")
	}
	cg := sandbox.OpenCgroups(sandbox.CgroupName(t.TempDir()), testkit.Logger(t))
	if cg.Version() == 0 {
		testkit.SkipOrFail(t, "no usable cgroup here")
	}
	t.Cleanup(func() { _ = cg.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "LOOPBACK-REACHED") })}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	pol, err := egress.NewPolicy(egress.Endpoint{Host: "api.openai.com", Port: 443}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	proxy := egress.New(egress.Config{Log: testkit.Logger(t)})
	defer proxy.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}

	bin := testkit.BuildFakeACP(t)
	opts := acpOpts(t, bin)
	hidden := filepath.Join(t.TempDir(), "data") // the bridge's data_dir
	other := filepath.Join(hidden, "sessions", "other")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "secret"), []byte("OTHER-SECRET-41"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts.StateDir = filepath.Join(hidden, "sessions", opts.SessionID)
	opts.Hide = []string{hidden}
	opts.Sandbox = &sandbox.Bwrap{}
	opts.Network = Network{Mode: NetworkProxy, Proxy: proxy, Policy: pol, Profile: "acp", Launcher: exe}
	opts.Cgroups, opts.Limits = cg, sandbox.Limits{Memory: 512 << 20, Processes: 256}
	delete(opts.Env, "FAKEACP_LOG") // outside the sandbox's view
	s, rec := startACP(t, opts)

	cmd := fmt.Sprintf("cat %s/secret; curl -sS -m 5 http://%s/ 2>&1; bash -c ': > /dev/tcp/%s' 2>&1; "+
		"echo forged > %s/acp/session; cat /proc/self/cgroup; echo HOME=$HOME",
		other, ln.Addr(), strings.Replace(ln.Addr().String(), ":", "/", 1), opts.StateDir)
	agenttest.Send(t, s, "run: "+cmd)
	p := agenttest.NextPermission(t, rec)
	agenttest.Respond(t, s, p.RequestID, streamjson.Decision{Allow: true})
	r := agenttest.NextResult(t, rec)
	t.Logf("command output: %s", r.Text)
	for _, leak := range []string{"OTHER-SECRET-41", "LOOPBACK-REACHED"} {
		if strings.Contains(r.Text, leak) {
			t.Errorf("the approved command got %s: %q", leak, r.Text)
		}
	}
	if !strings.Contains(r.Text, "Read-only file system") {
		t.Errorf("the agent could write the bridge's record of its session: %q", r.Text)
	}
	if !strings.Contains(r.Text, "HOME="+filepath.Join(opts.StateDir, "home")) {
		t.Errorf("HOME inside: %q", r.Text)
	}
	if !strings.Contains(r.Text, "refused (loopback)") {
		t.Errorf("the request to loopback did not go through the egress gate: %q", r.Text)
	}
	cgDirs := s.limits.cg.Dirs()
	if len(cgDirs) == 0 {
		t.Fatal("the agent has no cgroup")
	}
	procs, err := os.ReadFile(filepath.Join(cgDirs[0], "cgroup.procs"))
	if err != nil || !slices.Contains(strings.Fields(string(procs)), strconv.Itoa(s.PID())) {
		t.Errorf("the agent (pid %d) is not in its cgroup %s: %q, %v", s.PID(), cgDirs[0], procs, err)
	}
	b, err := os.ReadFile(filepath.Join(opts.StateDir, "acp", "session"))
	if err != nil || !strings.HasPrefix(string(b), "fake-") {
		t.Errorf("the session id record: %q, %v", b, err)
	}
}

// TestACPAgentToolsInSandbox: inside bubblewrap, with no network at all,
// an ACP agent reaches the host's MCP server through the relay (the
// bridge's binary, shown read-only) and the session's socket in its
// state directory, which lies inside the bridge's hidden data_dir; the
// agent cannot remove or replace the socket (its directory is
// read-only), nor see another session's.
func TestACPAgentToolsInSandbox(t *testing.T) {
	testkit.NeedBwrap(t)
	bin := testkit.BuildFakeACP(t)
	srv := &toolServer{conv: "sandboxed-conversation"}
	opts := toolOpts(t, bin, srv)
	hidden := filepath.Join(t.TempDir(), "data") // the bridge's data_dir
	other := filepath.Join(hidden, "sessions", "other", "acp")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	otherSock, err := mcprelay.Listen(filepath.Join(other, "mcp-0.sock"), srv.HandleMCP, mcprelay.Config{Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer otherSock.Close()
	opts.StateDir = filepath.Join(hidden, "sessions", opts.SessionID)
	opts.Hide = []string{hidden}
	opts.Sandbox = &sandbox.Bwrap{}
	opts.Network = Network{Mode: NetworkNone}
	delete(opts.Env, "FAKEACP_LOG") // outside the sandbox's view
	s, rec := startACP(t, opts)
	wantToolCall(t, s, rec, srv)

	sock := filepath.Join(opts.StateDir, "acp", "mcp-0.sock")
	agenttest.Send(t, s, fmt.Sprintf("run: rm -f %s 2>&1; touch %s/acp/mcp-1.sock 2>&1; ls %s 2>&1; echo done",
		sock, opts.StateDir, otherSock.Path()))
	p := agenttest.NextPermission(t, rec)
	agenttest.Respond(t, s, p.RequestID, streamjson.Decision{Allow: true})
	r := agenttest.NextResult(t, rec)
	t.Logf("command output: %s", r.Text)
	if strings.Count(r.Text, "Read-only file system") != 2 || !strings.Contains(r.Text, "No such file") {
		t.Errorf("the agent could change its socket's directory or see another session's socket: %q", r.Text)
	}
	if _, err := os.Stat(sock); err != nil {
		t.Errorf("the session's socket: %v", err)
	}
	wantToolCall(t, s, rec, srv)
}

// TestACPSandboxProtectsConfigDirs: an ACP agent's allowed command cannot
// write the settings an agent reads from its workdir (Gemini CLI's
// .gemini, Codex's .codex, and .claude): the
// sandbox shows them read-only, so the agent cannot allow itself every
// tool at its own next start; the rest of the workdir stays writable.
func TestACPSandboxProtectsConfigDirs(t *testing.T) {
	testkit.NeedBwrap(t)
	bin := testkit.BuildFakeACP(t)
	opts := acpOpts(t, bin)
	opts.Sandbox = &sandbox.Bwrap{}
	opts.Network = Network{Mode: NetworkNone}
	delete(opts.Env, "FAKEACP_LOG") // outside the sandbox's view
	s, rec := startACP(t, opts)

	places := []string{".gemini/settings.json", ".codex/config.toml", ".claude/settings.json", "allowed.txt"}
	var cmd strings.Builder
	for _, p := range places {
		fmt.Fprintf(&cmd, "mkdir -p $(dirname %s); echo '{}' > %s 2>&1; ", p, p)
	}
	cmd.WriteString("echo done")
	agenttest.Send(t, s, "run: "+cmd.String())
	p := agenttest.NextPermission(t, rec)
	agenttest.Respond(t, s, p.RequestID, streamjson.Decision{Allow: true})
	r := agenttest.NextResult(t, rec)
	t.Logf("command output: %s", r.Text)
	if n := strings.Count(r.Text, "Read-only file system"); n != len(places)-1 {
		t.Errorf("%d of the %d settings places refused the write: %q", n, len(places)-1, r.Text)
	}
	for _, p := range places {
		_, err := os.Stat(filepath.Join(opts.Workdir, p))
		if wrote := err == nil; wrote != (p == "allowed.txt") {
			t.Errorf("%s written: %v", p, wrote)
		}
	}
}
