//go:build linux

package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/agent/sandbox/egress/launch"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// needCurl skips without curl, except under CI where that is a failure.
func needCurl(t *testing.T) {
	t.Helper()
	testkit.NeedTool(t, "curl", "apt-get install curl")
}

// loopbackService serves body over HTTP on a free loopback port until the
// test ends and returns its address.
func loopbackService(t *testing.T, body string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) })}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// listeningPorts returns the TCP ports process pid listens on (IPv4 and
// IPv6), from its socket inodes and /proc/net/tcp{,6}.
func listeningPorts(t *testing.T, pid int) []int {
	t.Helper()
	inodes := map[string]bool{}
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	var ports []int
	for _, f := range []string{"tcp", "tcp6"} {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) < 10 || fs[3] != "0A" || !inodes[fs[9]] {
				continue
			}
			_, hexPort, _ := strings.Cut(fs[1], ":")
			if p, err := strconv.ParseInt(hexPort, 16, 32); err == nil {
				ports = append(ports, int(p))
			}
		}
	}
	return ports
}

// egressCount reads agentbridge_egress_total for decision and reason.
func egressCount(metrics, decision, reason string) int {
	re := regexp.MustCompile(`agentbridge_egress_total\{decision="` + decision + `",profile="coder",reason="` + reason + `"\} (\d+)`)
	m := re.FindStringSubmatch(metrics)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestE2EEgress: with the default network mode (proxy), an approved
// command reaches a loopback service listed in network.allow only through
// the proxy, and nothing else of the host: not the bridge's HTTP listener,
// not the warm-up stand-in, not a loopback service the test started; the
// proxy refuses the metadata address and a private address from the
// address alone (counted and logged), a direct connection anywhere fails
// at once (no route: no packet leaves the machine), and the model calls
// (the fake model on loopback) go through the proxy.
func TestE2EEgress(t *testing.T) {
	t.Parallel()
	testkit.NeedBwrap(t)
	needCurl(t)
	listed := loopbackService(t, "LISTED-OK")
	unlisted := loopbackService(t, "UNLISTED-SECRET")
	e := startSlackBridgeWith(t, profileOptions{extra: "    allowed_tools: [Bash]\n" +
		"    network: { allow: [\"" + listed + "\"] }\n"})
	ctx := ctxTimeout(t, e2eWait)
	if !e.bridge.waitLog(ctx, `msg="agent: warm spare ran its warm-up turn"`) {
		t.Fatalf("the warm spare ran no warm-up turn through the proxy\nlogs:\n%s", e.bridge.logs)
	}
	// The warm-up stand-in: the bridge's listening port that is not its HTTP listener.
	_, httpPort, _ := net.SplitHostPort(e.bridge.addr)
	warm := ""
	for _, p := range listeningPorts(t, e.bridge.cmd.Process.Pid) {
		if strconv.Itoa(p) != httpPort {
			warm = fmt.Sprintf("127.0.0.1:%d", p)
		}
	}
	if warm == "" {
		t.Fatalf("found no warm-up stand-in among the bridge's ports %v", listeningPorts(t, e.bridge.cmd.Process.Pid))
	}

	curl := func(name, url string, extra ...string) string {
		return fmt.Sprintf("echo '== %s'; curl -sS -m 10 %s -w ' status=%%{http_code}' %s 2>&1; echo", name, strings.Join(extra, " "), url)
	}
	direct := func(name, addr string) string {
		h, p, _ := net.SplitHostPort(addr)
		return fmt.Sprintf("echo '== %s'; t0=$(date +%%s%%N); (: > /dev/tcp/%s/%s) 2>&1; echo \"ms=$(( ($(date +%%s%%N) - t0) / 1000000 ))\"", name, h, p)
	}
	cmd := strings.Join([]string{
		"echo EGRESSTEST",
		"echo '== env'; echo \"proxy=$HTTPS_PROXY/$HTTP_PROXY/$https_proxy/$http_proxy no=$NO_PROXY$no_proxy\"",
		curl("listed", "http://"+listed+"/"),
		curl("listed-tunnel", "http://"+listed+"/", "-p"),
		direct("listed-direct", listed),
		curl("unlisted", "http://"+unlisted+"/"),
		direct("unlisted-direct", unlisted),
		curl("bridge-http", "http://"+e.bridge.addr+"/metrics"),
		direct("bridge-http-direct", e.bridge.addr),
		curl("warm", "http://"+warm+"/warmup/x/v1/messages", "-X", "POST", "-d", "{}"),
		direct("warm-direct", warm),
		curl("metadata", "http://169.254.169.254/latest/meta-data/"),
		curl("metadata-tunnel", "http://169.254.169.254/latest/meta-data/", "-p"),
		curl("metadata-name", "http://metadata.google.internal/computeMetadata/v1/"),
		curl("private", "http://10.255.255.1/"),
		direct("metadata-direct", "169.254.169.254:80"),
		direct("public-direct", "192.0.2.1:443"),
		"echo '== end'",
	}, "; ")
	thread := e.slack.Mention(slackChan, alice, "[bash "+cmd+"]", "")
	e.waitThreadText(t, thread, "tool said")
	out := toolResultWith(e.model, "EGRESSTEST")
	if out == "" {
		t.Fatalf("the model never received the tool result\nposts: %s", e.dump())
	}
	t.Logf("tool result:\n%s", out)

	want := func(sec string, wants ...string) {
		t.Helper()
		got := section(out, sec)
		for _, w := range wants {
			if !strings.Contains(got, w) {
				t.Errorf("%s: got %q, want it to contain %q", sec, got, w)
			}
		}
	}
	refused := func(sec string) {
		t.Helper()
		got := section(out, sec)
		if strings.Contains(got, "UNLISTED-SECRET") || strings.Contains(got, "agentbridge_") || strings.Contains(got, "msg_warmup") ||
			!strings.Contains(got, "403") {
			t.Errorf("%s: got %q, want the proxy's refusal (403)", sec, got)
		}
	}
	noRoute := func(sec, why string) {
		t.Helper()
		got := section(out, sec)
		m := regexp.MustCompile(`ms=(\d+)`).FindStringSubmatch(got)
		if !strings.Contains(got, why) || m == nil {
			t.Errorf("%s: got %q, want %q", sec, got, why)
			return
		}
		if ms, _ := strconv.Atoi(m[1]); ms > 1000 {
			t.Errorf("%s: a direct connection took %d ms, want an immediate failure", sec, ms)
		}
	}
	if got := section(out, "env"); got != "proxy=http://127.0.0.1:3128/http://127.0.0.1:3128/http://127.0.0.1:3128/http://127.0.0.1:3128 no=" {
		t.Errorf("env: got %q, want the sandbox's proxy listener as every proxy and no NO_PROXY", got)
	}
	want("listed", "LISTED-OK", "status=200")
	want("listed-tunnel", "LISTED-OK", "status=200")
	noRoute("listed-direct", "Connection refused") // the sandbox's own loopback: nothing listens there
	refused("unlisted")
	noRoute("unlisted-direct", "Connection refused")
	refused("bridge-http")
	noRoute("bridge-http-direct", "Connection refused")
	refused("warm")
	noRoute("warm-direct", "Connection refused")
	refused("metadata")
	want("metadata-tunnel", "403")
	refused("metadata-name")
	refused("private")
	noRoute("metadata-direct", "Network is unreachable")
	noRoute("public-direct", "Network is unreachable")

	m := e.bridge.metrics(t)
	for _, c := range []struct {
		decision, reason string
		min              int
	}{
		{"allowed", "model", 2}, // the turn's two model calls (before and after the tool)
		{"allowed", "warm-up", 1},
		{"allowed", "allow-list", 2},
		{"refused", "loopback", 3},
		{"refused", "metadata", 3},
		{"refused", "private", 1},
	} {
		if n := egressCount(m, c.decision, c.reason); n < c.min {
			t.Errorf("agentbridge_egress_total{decision=%s,reason=%s} = %d, want at least %d\n%s", c.decision, c.reason, n, c.min, grepLines(m, "agentbridge_egress"))
		}
	}
	logs := e.bridge.logs.String()
	for _, l := range []string{
		`msg="egress refused" profile=coder`,
		`host=169.254.169.254 port=80 reason=metadata addr=169.254.169.254:80`,
		`host=metadata.google.internal port=80 reason=metadata`,
		`host=10.255.255.1 port=80 reason=private addr=10.255.255.1:80`,
	} {
		if !strings.Contains(logs, l) {
			t.Errorf("logs lack %q", l)
		}
	}
	if strings.Contains(logs, `msg="egress: dial failed"`) {
		t.Errorf("the proxy dialed something it refused:\n%s", grepLines(logs, "dial failed"))
	}
}

// TestLauncherStartsLight: the bridge binary run as a sandbox's launcher
// (agent/sandbox/egress/launch) starts none of the bridge's heavy
// dependencies — it does its work from an init that Go runs before them —
// so an agent's start does not pay the whole binary's start-up (≈ 30 ms of
// CPU and 10 MB). Started without its hand-off descriptor, it fails with
// 125 before running the program.
func TestLauncherStartsLight(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(bridgeBin, launch.Args(bridgeBin, []string{"/bin/echo", "ran"})[1:]...)
	cmd.Env = []string{"GODEBUG=inittrace=1"}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 125 || strings.Contains(string(out), "ran\n") {
		t.Fatalf("exit %v, output:\n%s", err, out)
	}
	var inits []string
	for line := range strings.SplitSeq(string(out), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "init" {
			inits = append(inits, f[1])
		}
	}
	heavy := regexp.MustCompile(`chroma|whatsmeow|protobuf|prometheus|slack-go|discordgo|goldmark|jsonschema|bluemonday|yaml|net/http|^net$`)
	for _, p := range inits {
		if heavy.MatchString(p) {
			t.Errorf("the launcher initialised %s", p)
		}
	}
	// The whole binary initialises about 190 packages; the launcher those
	// that precede package os.
	if len(inits) == 0 || len(inits) > 40 {
		t.Errorf("the launcher initialised %d packages: %v", len(inits), inits)
	}
}
