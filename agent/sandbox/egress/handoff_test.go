package egress

import (
	"errors"
	"fmt"
	"os"
	"os/exec"

	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/sandbox/egress/launch" // also makes this test binary a launcher
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// launchInNetns runs script behind the launcher (this test binary, see
// package launch) in
// bubblewrap with its own network namespace, as the sandbox does, serves
// the handed-over listener as a gate of p with pol, and returns the
// script's output and exit error.
func launchInNetns(t *testing.T, p *Proxy, pol *Policy, script string) ([]byte, error) {
	t.Helper()
	bwrap := testkit.NeedBwrap(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandOff()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	cmd := exec.Command(bwrap, append([]string{"--dev-bind", "/", "/", "--unshare-net", "--die-with-parent", "--"},
		launch.Args(exe, []string{"/bin/bash", "-c", script})...)...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.ExtraFiles = []*os.File{h.Child()}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h.Started()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	ln, err := h.Receive()
	if err != nil {
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("no listener from the launcher: %v\n%s", err, out.String())
	}
	g, err := p.Serve(ln, pol, "prof", "sess")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("launched script hung")
	}
	return []byte(out.String()), err
}

// TestLauncherInNetns runs a script behind the launcher in its own network
// namespace, as the sandbox does: a connection to 127.0.0.1:ProxyPort
// reaches the gate served by this process on the handed-over listener (a
// listed loopback service through CONNECT), a direct connection to a host
// loopback service finds nothing, an address off the machine has no route
// (fails at once, no packet sent), the script holds neither the listener
// nor the hand-off descriptor, and its exit code comes back.
func TestLauncherInNetns(t *testing.T) {
	listed, unlisted := echoServer(t), echoServer(t)
	pol, _ := NewPolicy(Endpoint{"api.anthropic.com", 443}, []string{listed}, nil)
	p, rec := testProxy(t, Config{}, nil, nil)
	if ProxyURL != fmt.Sprintf("http://127.0.0.1:%d", launch.Port) {
		t.Fatalf("ProxyURL %s does not match launch.Port %d", ProxyURL, launch.Port)
	}
	_, unlistedPort, _ := strings.Cut(unlisted, ":")
	script := strings.Join([]string{
		`echo "sockets held: $(ls -l /proc/$$/fd | grep -c socket:)"`,
		`exec 7<>/dev/tcp/127.0.0.1/` + fmt.Sprint(launch.Port),
		`printf 'CONNECT ` + listed + ` HTTP/1.1\r\nHost: x\r\n\r\n' >&7`,
		`read -r status <&7; read -r blank <&7`,
		`echo "proxy: $status"`,
		`echo ping >&7; read -r echoed <&7; echo "echo: $echoed"`,
		`start=$(date +%s%N)`,
		`(exec 4<>/dev/tcp/127.0.0.1/` + unlistedPort + `) 2>&1 | sed 's/^/direct: /'`,
		`(exec 5<>/dev/tcp/192.0.2.1/80) 2>&1 | sed 's/^/offhost: /'`,
		`echo "ms: $(( ($(date +%s%N) - start) / 1000000 ))"`,
		`exit 7`,
	}, "\n")
	out, err := launchInNetns(t, p, pol, script)
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
	if !strings.Contains(text, "sockets held: 0\n") {
		t.Error("the launched program holds a socket (the listener or the hand-off pair)")
	}
	var ms int
	if _, err := fmt.Sscanf(text[strings.Index(text, "ms: "):], "ms: %d", &ms); err != nil || ms > 1000 {
		t.Errorf("direct connections took %d ms (%v); want an immediate failure", ms, err)
	}
	evs, _, dials := rec.snapshot()
	if len(evs) != 1 || !evs[0].Allow || len(dials) != 1 {
		t.Errorf("events %+v, dials %v: want the one CONNECT to the listed service", evs, dials)
	}
}

// TestHandOffWithoutListener: a launcher that ends without handing a
// listener over (here: a program started in its place) makes Receive fail
// at once with a clear error instead of waiting.
func TestHandOffWithoutListener(t *testing.T) {
	h, err := NewHandOff()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	cmd := exec.Command("/bin/true")
	cmd.ExtraFiles = []*os.File{h.Child()}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	h.Started()
	got := make(chan error, 1)
	go func() { _, err := h.Receive(); got <- err }()
	select {
	case err := <-got:
		if err == nil || !strings.Contains(err.Error(), "without handing its listener over") {
			t.Errorf("Receive: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Receive still waiting after the launcher ended")
	}
}

// TestHandOffClosed: Close ends a Receive that waits.
func TestHandOffClosed(t *testing.T) {
	h, err := NewHandOff()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { _, err := h.Receive(); got <- err }()
	time.Sleep(50 * time.Millisecond) // let it wait (it fails either way)
	h.Close()
	select {
	case err := <-got:
		if err == nil {
			t.Error("Receive after Close: no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Receive still waiting after Close")
	}
}
