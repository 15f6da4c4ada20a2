//go:build linux

package main

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestBenchEgress measures what the egress proxy costs a turn: two bridges
// side by side, one profile in network mode host, one in proxy (the
// default), both sandboxed, no warm spares; cold first replies and
// follow-ups are interleaved so that both see the same machine. It runs
// only with BENCH_EGRESS=1; BENCH_N (default 15) follow-ups per mode.
//
//	BENCH_EGRESS=1 go test ./cmd/bridge -run TestBenchEgress -v
func TestBenchEgress(t *testing.T) {
	if os.Getenv("BENCH_EGRESS") != "1" {
		t.Skip("BENCH_EGRESS=1 runs the egress A/B benchmark")
	}
	testkit.NeedBwrap(t)
	n := 15
	if v, err := strconv.Atoi(os.Getenv("BENCH_N")); err == nil && v > 0 {
		n = v
	}
	modes := []string{"host", "proxy"}
	envs := map[string]*slackEnv{}
	for _, m := range modes {
		envs[m] = startSlackBridgeWith(t, profileOptions{maxLive: 8, extra: "    warm_spares: 0\n    network: { mode: " + m + " }\n"})
	}
	cold, follow := map[string][]time.Duration{}, map[string][]time.Duration{}
	threads := map[string]string{}
	for i := range max(3, n/3) {
		for _, m := range modes {
			e := envs[m]
			text := fmt.Sprintf("cold %d", i)
			start := time.Now()
			threads[m] = e.slack.Mention(slackChan, alice, text, "")
			e.waitThreadText(t, threads[m], "pong: "+text)
			cold[m] = append(cold[m], time.Since(start))
		}
	}
	for i := range n {
		for _, m := range modes {
			e := envs[m]
			text := fmt.Sprintf("follow-up %d", i)
			start := time.Now()
			e.slack.SendMessage(slackChan, alice, text, threads[m])
			e.waitThreadText(t, threads[m], "pong: "+text)
			follow[m] = append(follow[m], time.Since(start))
		}
	}
	for _, m := range modes {
		t.Logf("network mode %-5s  cold first reply %s   follow-up %s", m, stats(cold[m]), stats(follow[m]))
	}
	t.Logf("proxy/host: cold %.2f×, follow-up %.2f×", ratio(cold["proxy"], cold["host"]), ratio(follow["proxy"], follow["host"]))
}
