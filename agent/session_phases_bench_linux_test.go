//go:build linux

package agent

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/agent/sandbox/egress"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// BenchmarkStartPhases: where a new conversation's agent spends its time
// from Start to its first answer, with the CLI against the fake model,
// unconfined and with every protection a user gets by default (bubblewrap,
// its own network namespace whose only way out is the egress gate behind
// the launcher, its own cgroup). Per op, in ms: start (state and temp
// directories, cgroup, hand-off pair, bubblewrap's and the launcher's
// start; Start returns), boot (the CLI answers initialize), to-model (the
// first message sent → the model request arrives, through the gate with
// protections), answer (→ the result read), total.
//
//	go test ./agent -run '^$' -bench StartPhases -benchtime 10x
func BenchmarkStartPhases(b *testing.B) {
	b.Run("protections=none", func(b *testing.B) {
		h := &harness{agenttest.NewHarness(b)}
		benchStartPhases(b, h, h.opts())
	})
	b.Run("protections=default", func(b *testing.B) {
		testkit.NeedBwrap(b)
		h := &harness{agenttest.NewHarness(b)}
		opts := h.opts()
		cg := sandbox.OpenCgroups(sandbox.CgroupName(b.TempDir()), slog.New(slog.DiscardHandler))
		if cg.Version() == 0 {
			b.Skip("no usable cgroup here")
		}
		b.Cleanup(func() { _ = cg.Close() })
		u, err := url.Parse(h.Model.URL())
		if err != nil {
			b.Fatal(err)
		}
		port, _ := strconv.Atoi(u.Port())
		pol, err := egress.NewPolicy(egress.Endpoint{Host: u.Hostname(), Port: port}, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		proxy := egress.New(egress.Config{})
		b.Cleanup(proxy.Close)
		exe, err := os.Executable()
		if err != nil {
			b.Fatal(err)
		}
		opts.Sandbox = &sandbox.Bwrap{}
		opts.Network = Network{Mode: NetworkProxy, Proxy: proxy, Policy: pol, Profile: "bench", Launcher: exe}
		opts.Cgroups, opts.Limits = cg, sandbox.Limits{Memory: 4 << 30, Processes: 512, CPU: 1}
		benchStartPhases(b, h, opts)
	})
}

func benchStartPhases(b *testing.B, h *harness, base Options) {
	var start, boot, toModel, answer time.Duration
	i := 0
	for b.Loop() {
		i++
		opts := base
		opts.SessionID = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		if base.Sandbox != nil {
			opts.StateDir = b.TempDir()
		}
		t0 := time.Now()
		s, err := Start(context.Background(), opts, slog.New(slog.DiscardHandler))
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := s.Initialize(context.Background()); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		n := len(h.Model.MessagesRequests())
		agenttest.BenchSend(b, s, fmt.Sprintf("first %d", i))
		if r := agenttest.BenchResult(b, s.Events()); r.IsError {
			b.Fatalf("result %+v", r)
		}
		t4 := time.Now()
		reqs := h.Model.MessagesRequests()
		if len(reqs) <= n {
			b.Fatal("no model request for the first message")
		}
		t3 := reqs[n].Time
		start, boot, toModel, answer = start+t1.Sub(t0), boot+t2.Sub(t1), toModel+t3.Sub(t2), answer+t4.Sub(t3)
		b.StopTimer()
		agenttest.BenchClose(b, s)
		b.StartTimer()
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(i) }
	b.ReportMetric(ms(start), "start-ms/op")
	b.ReportMetric(ms(boot), "boot-ms/op")
	b.ReportMetric(ms(toModel), "to-model-ms/op")
	b.ReportMetric(ms(answer), "answer-ms/op")
	b.ReportMetric(ms(start+boot+toModel+answer), "total-ms/op")
}
