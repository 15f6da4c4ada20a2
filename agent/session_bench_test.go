package agent

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/sandbox"
)

// benchSandboxes runs bench once unconfined and once in bubblewrap (with a
// private state dir, as the bridge runs agents), when bwrap is installed.
func benchSandboxes(b *testing.B, bench func(b *testing.B, opts Options, h *harness)) {
	b.Run("sandbox=none", func(b *testing.B) {
		h := &harness{agenttest.NewHarness(b)}
		bench(b, h.opts(), h)
	})
	b.Run("sandbox=none,private-state", func(b *testing.B) {
		h := &harness{agenttest.NewHarness(b)}
		opts := h.opts()
		opts.StateDir = filepath.Join(b.TempDir(), "state")
		bench(b, opts, h)
	})
	b.Run("sandbox=bwrap", func(b *testing.B) {
		if _, err := exec.LookPath("bwrap"); err != nil {
			b.Skip("bwrap not installed")
		}
		h := &harness{agenttest.NewHarness(b)}
		opts := h.opts()
		opts.Sandbox = &sandbox.Bwrap{}
		opts.StateDir = filepath.Join(b.TempDir(), "state")
		bench(b, opts, h)
	})
}

// BenchmarkFollowUpLive: one message on a live process → its result.
// Run: go test ./agent -run '^$' -bench 'FollowUpLive|SpawnResume' -benchtime 20x
func BenchmarkFollowUpLive(b *testing.B) { benchSandboxes(b, benchFollowUpLive) }

func benchFollowUpLive(b *testing.B, opts Options, _ *harness) {
	s, err := Start(context.Background(), opts, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	defer agenttest.BenchClose(b, s)
	agenttest.BenchSend(b, s, "warm up")
	agenttest.BenchResult(b, s.Events())
	b.ResetTimer()
	i := 0
	for b.Loop() {
		i++
		agenttest.BenchSend(b, s, fmt.Sprintf("follow-up %d", i))
		if r := agenttest.BenchResult(b, s.Events()); r.IsError {
			b.Fatalf("result %+v", r)
		}
	}
}

// BenchmarkSpawnResume: per message, spawn the CLI with --resume, send,
// wait for the result (the exit afterwards is not timed).
func BenchmarkSpawnResume(b *testing.B) { benchSandboxes(b, benchSpawnResume) }

func benchSpawnResume(b *testing.B, opts Options, _ *harness) {
	s, err := Start(context.Background(), opts, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	agenttest.BenchSend(b, s, "first message")
	agenttest.BenchResult(b, s.Events())
	agenttest.BenchClose(b, s)
	opts.Resume = true
	b.ResetTimer()
	i := 0
	for b.Loop() {
		i++
		s, err := Start(context.Background(), opts, slog.New(slog.DiscardHandler))
		if err != nil {
			b.Fatal(err)
		}
		agenttest.BenchSend(b, s, fmt.Sprintf("resumed %d", i))
		if r := agenttest.BenchResult(b, s.Events()); r.IsError {
			b.Fatalf("result %+v", r)
		}
		b.StopTimer()
		agenttest.BenchClose(b, s)
		b.StartTimer()
	}
}
