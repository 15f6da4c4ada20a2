package agent

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/agent/sandbox/egress"
	"github.com/agentbridge/agentbridge/agent/sandbox/egress/launch"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

func TestNetworkEnv(t *testing.T) {
	env := []string{"HOME=/h", "HTTP_PROXY=http://mine", "NO_PROXY=localhost", "no_proxy=*", "all_proxy=socks5://x", "PATH=/bin"}
	if got := networkEnv(env, nil, false); !slices.Equal(got, env) {
		t.Errorf("without a gate: %q", got)
	}
	want := []string{"HOME=/h", "HTTPS_PROXY=" + egress.ProxyURL, "HTTP_PROXY=" + egress.ProxyURL, "PATH=/bin",
		"http_proxy=" + egress.ProxyURL, "https_proxy=" + egress.ProxyURL}
	if got := networkEnv(env, &egressLink{}, false); !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// An ACP agent keeps the loopback names of its NO_PROXY (its sandbox's
	// own loopback), nothing else of it.
	env = append(env, "no_proxy=api.example.com, localhost,10.0.0.1,::1")
	env[2] = "NO_PROXY=*"
	want = []string{"HOME=/h", "HTTPS_PROXY=" + egress.ProxyURL, "HTTP_PROXY=" + egress.ProxyURL, "PATH=/bin",
		"http_proxy=" + egress.ProxyURL, "https_proxy=" + egress.ProxyURL, "no_proxy=localhost,::1"}
	if got := networkEnv(env, &egressLink{}, true); !slices.Equal(got, want) {
		t.Errorf("kind acp: got  %q\nwant %q", got, want)
	}
}

func TestNetworkSpec(t *testing.T) {
	spec := sandbox.Spec{Argv: []string{"/usr/bin/claude", "-p"}, Dir: "/w", ReadOnly: []string{"/usr/lib/node"}}
	if got := networkSpec(Options{}, nil, spec); got.UnshareNet || !slices.Equal(got.Argv, spec.Argv) {
		t.Errorf("host: %+v", got)
	}
	if got := networkSpec(Options{Network: Network{Mode: NetworkNone}}, nil, spec); !got.UnshareNet || !slices.Equal(got.Argv, spec.Argv) {
		t.Errorf("none: %+v", got)
	}
	got := networkSpec(Options{Network: Network{Mode: NetworkProxy, Launcher: "/opt/bridge"}}, &egressLink{}, spec)
	wantArgv := []string{"/opt/bridge", launch.Command, "--", "/usr/bin/claude", "-p"}
	if !got.UnshareNet || !slices.Equal(got.Argv, wantArgv) || !slices.Equal(got.ReadOnly, []string{"/usr/lib/node", "/opt/bridge"}) {
		t.Errorf("proxy: %+v", got)
	}
	if len(spec.ReadOnly) != 1 {
		t.Errorf("the caller's spec changed: %+v", spec)
	}
}

// TestNetworkNeedsSandbox: modes proxy and none are refused without a
// sandbox that can unshare the network, and proxy without its parts.
func TestNetworkNeedsSandbox(t *testing.T) {
	for _, n := range []Network{{Mode: NetworkNone}, {Mode: NetworkProxy}, {Mode: "bogus"}} {
		_, err := Start(context.Background(), Options{Command: "true", Workdir: t.TempDir(), Network: n}, testkit.Logger(t))
		if err == nil || !strings.Contains(err.Error(), "network") {
			t.Errorf("mode %q without a sandbox: %v", n.Mode, err)
		}
	}
	_, err := Start(context.Background(), Options{Command: "true", Workdir: t.TempDir(), Sandbox: &sandbox.Bwrap{},
		Network: Network{Mode: NetworkProxy}}, testkit.Logger(t))
	if err == nil || !strings.Contains(err.Error(), "needs a proxy") {
		t.Errorf("proxy without a proxy: %v", err)
	}
}

// TestSessionThroughProxy starts a sandboxed process (a stand-in for the
// CLI) in network mode proxy, behind the launcher (this test binary, see
// TestMain): it reaches a listed loopback service through HTTP_PROXY and
// nothing directly, as the process the launcher became (no process of the
// bridge binary stays in the sandbox); after its exit the gate is closed.
func TestSessionThroughProxy(t *testing.T) {
	testkit.NeedBwrap(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not on PATH")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "LISTED") })}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	pol, err := egress.NewPolicy(egress.Endpoint{Host: "api.anthropic.com", Port: 443}, []string{ln.Addr().String()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	proxy := egress.New(egress.Config{Log: testkit.Logger(t)})
	defer proxy.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	cli := testkit.FakeCLI(t, fmt.Sprintf(`
{ echo "proxy=$HTTPS_PROXY"
  echo "parent=$(cat /proc/$PPID/comm)"
  curl -sS -m 5 http://%[1]s/ 2>&1; echo
  bash -c ': > /dev/tcp/%[2]s' 2>&1
} > "$PWD/out.txt"
exit 0
`, ln.Addr(), strings.Replace(ln.Addr().String(), ":", "/", 1)))
	s, err := Start(context.Background(), Options{
		Command: cli, Workdir: work, Home: t.TempDir(), Sandbox: &sandbox.Bwrap{},
		Network: Network{Mode: NetworkProxy, Proxy: proxy, Policy: pol, Profile: "p", Launcher: exe},
	}, testkit.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	rec := agenttest.Record(t, s)
	link := s.egress
	ex := agenttest.NextExit(t, rec)
	rec.WaitClosed(t)
	out, _ := os.ReadFile(filepath.Join(work, "out.txt"))
	t.Logf("output:\n%s", out)
	if ex.Code != 0 {
		t.Fatalf("exit %+v", ex)
	}
	for _, want := range []string{"proxy=" + egress.ProxyURL, "LISTED", "Connection refused", "parent=bwrap"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if _, err := link.waitGate(); err != nil {
		t.Errorf("gate: %v", err)
	}
}
