package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// floodScript is what an agent runs to attack the warm-up stand-in (issue
// 20, attack 6): `bash flood.sh PORT N` finds PORT listening on 127.0.0.1
// in /proc/net/tcp, then sends it N requests, each for a fresh 4 KB token,
// pipelined on connections of 500 requests, and prints how they were
// answered.
const floodScript = `port=$1 n=$2
hex=$(printf '%04X' "$port")
grep -q ": 0100007F:$hex 00000000:0000 0A" /proc/net/tcp || { echo "port $port is not in /proc/net/tcp"; exit 1; }
echo "found 127.0.0.1:$port listening in /proc/net/tcp"
pad=$(printf 'f%.0s' {1..4000})
sent=0
: > answers
while (( sent < n )); do
  exec 3<>/dev/tcp/127.0.0.1/$port || exit 1
  cat <&3 >> answers &
  reader=$!
  for (( i = 0; i < 500 && sent < n; i++ )); do
    conn=keep-alive
    (( i == 499 || sent == n - 1 )) && conn=close
    printf 'POST /warmup/%s%d-%d/v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: %s\r\nContent-Length: 2\r\n\r\n{}' "$pad" "$sent" "$RANDOM" "$conn" >&3
    sent=$(( sent + 1 ))
  done
  wait $reader
  exec 3>&-
done
echo "sent $sent; answers 200: $(grep -o 'HTTP/1.1 200' answers | wc -l) 404: $(grep -o 'HTTP/1.1 404' answers | wc -l)"
echo flood done
`

// standInAddr matches the pool's log line with the stand-in's address.
var standInAddr = regexp.MustCompile(`msg="agent: warm-up model listening" addr=127\.0\.0\.1:(\d+)`)

// TestE2EWarmUpStandInFlood is attack 6 of issue 20 through the bridge
// binary and the real CLI, with host networking (network mode host: the
// stand-in is reachable from the sandbox): an approved command (allowed by
// rule) finds the stand-in's port in /proc/net/tcp and sends it 20,000
// requests with fresh 4 KB tokens. The bridge's resident memory (VmRSS)
// grows by less than 5 MB, every request is refused, and later spares still
// run their warm-up turns. The old stand-in kept a counter per token.
func TestE2EWarmUpStandInFlood(t *testing.T) {
	t.Parallel()
	testkit.NeedBwrap(t)
	e := startSlackBridgeWith(t, profileOptions{extra: "    network: { mode: host }\n" +
		"    rules:\n      - { tool: Bash, match: \"bash flood.sh *\", action: allow }\n"})
	e.waitSpareReady(t)
	m := standInAddr.FindStringSubmatch(e.bridge.logs.String())
	if m == nil {
		t.Fatalf("the bridge did not log the stand-in's address\nlogs:\n%s", e.bridge.logs)
	}
	port := m[1]
	if err := os.WriteFile(filepath.Join(e.workdir, "flood.sh"), []byte(floodScript), 0o644); err != nil {
		t.Fatal(err)
	}

	// A first flood of no requests: the turn, the command and the next
	// spare's warm-up have run once before the baseline is taken.
	a := e.slack.Mention(slackChan, alice, "[bash bash flood.sh "+port+" 0]", "")
	e.waitThreadText(t, a, "found 127.0.0.1:"+port+" listening in /proc/net/tcp")
	e.waitThreadText(t, a, "flood done")
	e.waitWarmUps(t, 2)
	e.waitSpareReady(t)
	time.Sleep(time.Second)
	before := vmRSS(t, e.bridge.cmd.Process.Pid)

	e.slack.SendMessage(slackChan, alice, "[bash bash flood.sh "+port+" 20000]", a)
	e.waitThreadText(t, a, "sent 20000; answers")
	time.Sleep(time.Second)
	after := vmRSS(t, e.bridge.cmd.Process.Pid)
	t.Logf("bridge VmRSS before the flood %d kB, after 20,000 fresh tokens %d kB (%+d kB)", before, after, after-before)
	if after-before > 5<<10 {
		t.Errorf("the bridge's RSS grew by %d kB from 20,000 requests to the stand-in, want under 5 MB", after-before)
	}
	e.waitThreadText(t, a, "sent 20000; answers 200: 0 404: 20000") // every request refused

	// Later spares still run their warm-up turns: a new thread takes the
	// ready spare, and its replacement warms up after the flood.
	b := e.slack.Mention(slackChan, alice, "after the flood", "")
	e.waitThreadText(t, b, "pong: after the flood")
	e.waitWarmUps(t, 3)
	if logs := e.bridge.logs.String(); strings.Contains(logs, "warm-up turn failed") {
		t.Errorf("a warm-up turn failed\nlogs:\n%s", logs)
	}
}

// waitWarmUps waits until n spares have run their warm-up turn.
func (e *slackEnv) waitWarmUps(t *testing.T, n int) {
	t.Helper()
	testkit.WaitUntilSeen(t, fmt.Sprintf("%d warm-up turns", n), e2eWait, func() (bool, string) {
		logs := e.bridge.logs.String()
		return strings.Count(logs, `msg="agent: warm spare ran its warm-up turn"`) >= n, "logs:\n" + logs
	})
}

// vmRSS is process pid's resident memory in kB (/proc/<pid>/status).
func vmRSS(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatalf("VmRSS %q: %v", v, err)
			}
			return kb
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}
