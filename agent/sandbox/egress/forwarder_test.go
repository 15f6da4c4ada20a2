package egress

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestMain lets the test binary serve as the forwarder (as the bridge
// binary does in production).
func TestMain(m *testing.M) {
	MaybeForward()
	os.Exit(m.Run())
}

// TestForwarderInNetns runs the forwarder in its own network namespace,
// as the sandbox does: a connection to 127.0.0.1:ForwarderPort reaches the
// gate (a listed loopback service through CONNECT), a direct connection to
// a host loopback service finds nothing, an address off the machine has no
// route (fails at once, no packet sent), and the child's exit code comes
// back.
func TestForwarderInNetns(t *testing.T) {
	bwrap := testkit.NeedBwrap(t)
	listed, unlisted := echoServer(t), echoServer(t)
	pol, _ := NewPolicy(Endpoint{"api.anthropic.com", 443}, []string{listed}, nil)
	_, sock, rec := testGate(t, Config{}, pol, nil, nil)
	if ProxyURL != fmt.Sprintf("http://127.0.0.1:%d", ForwarderPort) {
		t.Fatalf("ProxyURL %s does not match ForwarderPort %d", ProxyURL, ForwarderPort)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	_, unlistedPort, _ := strings.Cut(unlisted, ":")
	script := strings.Join([]string{
		`exec 3<>/dev/tcp/127.0.0.1/` + fmt.Sprint(ForwarderPort),
		`printf 'CONNECT ` + listed + ` HTTP/1.1\r\nHost: x\r\n\r\n' >&3`,
		`read -r status <&3; read -r blank <&3`,
		`echo "proxy: $status"`,
		`echo ping >&3; read -r echoed <&3; echo "echo: $echoed"`,
		`start=$(date +%s%N)`,
		`(exec 4<>/dev/tcp/127.0.0.1/` + unlistedPort + `) 2>&1 | sed 's/^/direct: /'`,
		`(exec 5<>/dev/tcp/192.0.2.1/80) 2>&1 | sed 's/^/offhost: /'`,
		`echo "ms: $(( ($(date +%s%N) - start) / 1000000 ))"`,
		`exit 7`,
	}, "\n")
	cmd := exec.Command(bwrap, "--dev-bind", "/", "/", "--unshare-net", "--die-with-parent", "--",
		exe, ForwarderCommand, sock, "--", "/bin/bash", "-c", script)
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("forwarder hung")
	}
	t.Logf("output:\n%s", out)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Errorf("exit: %v, want code 7", err)
	}
	text := string(out)
	for _, want := range []string{"proxy: HTTP/1.1 200", "echo: ping", "direct: ", "Connection refused", "offhost: ", "Network is unreachable"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	var ms int
	if _, err := fmt.Sscanf(text[strings.Index(text, "ms: "):], "ms: %d", &ms); err != nil || ms > 1000 {
		t.Errorf("direct connections took %d ms (%v); want an immediate failure", ms, err)
	}
	evs, _, dials := rec.snapshot()
	if len(evs) != 1 || !evs[0].Allow || len(dials) != 1 {
		t.Errorf("events %+v, dials %v: want the one CONNECT to the listed service", evs, dials)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(sock), "p.sock")); err != nil {
		t.Errorf("socket gone: %v", err)
	}
}

// TestForwarderUsage: bad arguments fail with 125.
func TestForwarderUsage(t *testing.T) {
	var b strings.Builder
	if code := RunForwarder([]string{"sock"}, &b); code != 125 || !strings.Contains(b.String(), "usage") {
		t.Errorf("code %d, %q", code, b.String())
	}
}
