package agent

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// benchSandboxes runs bench once unconfined and once in bubblewrap (with a
// private state dir, as the bridge runs agents), when bwrap is installed.
func benchSandboxes(b *testing.B, bench func(b *testing.B, opts Options, h *harness)) {
	b.Run("sandbox=none", func(b *testing.B) {
		h := newHarness(b)
		bench(b, h.opts(), h)
	})
	b.Run("sandbox=none,private-state", func(b *testing.B) {
		h := newHarness(b)
		opts := h.opts()
		opts.StateDir = filepath.Join(b.TempDir(), "state")
		bench(b, opts, h)
	})
	b.Run("sandbox=bwrap", func(b *testing.B) {
		if _, err := exec.LookPath("bwrap"); err != nil {
			b.Skip("bwrap not installed")
		}
		h := newHarness(b)
		opts := h.opts()
		opts.Sandbox = &sandbox.Bwrap{}
		opts.StateDir = filepath.Join(b.TempDir(), "state")
		bench(b, opts, h)
	})
}

// benchResult reads events until a Result (or fails on Exit).
func benchResult(b *testing.B, events <-chan streamjson.Event) streamjson.Result {
	b.Helper()
	timeout := time.After(eventTimeout)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				b.Fatal("events closed before a result")
			}
			switch e := ev.(type) {
			case streamjson.Result:
				return e
			case streamjson.Exit:
				b.Fatalf("agent exited: %+v", e)
			}
		case <-timeout:
			b.Fatal("no result")
		}
	}
}

// benchClose closes s and drains its events.
func benchClose(b *testing.B, s *Session) {
	b.Helper()
	if err := s.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	for range s.Events() {
	}
}

func benchSend(b *testing.B, s *Session, text string) {
	b.Helper()
	if err := s.Send(context.Background(), streamjson.UserMessage{UUID: uuid.NewString(), Text: text}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkFollowUpLive: one message on a live process → its result.
// Run: go test ./agent -run '^$' -bench 'FollowUpLive|SpawnResume' -benchtime 20x
func BenchmarkFollowUpLive(b *testing.B) { benchSandboxes(b, benchFollowUpLive) }

func benchFollowUpLive(b *testing.B, opts Options, _ *harness) {
	s, err := Start(context.Background(), opts, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	defer benchClose(b, s)
	benchSend(b, s, "warm up")
	benchResult(b, s.Events())
	b.ResetTimer()
	i := 0
	for b.Loop() {
		i++
		benchSend(b, s, fmt.Sprintf("follow-up %d", i))
		if r := benchResult(b, s.Events()); r.IsError {
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
	benchSend(b, s, "first message")
	benchResult(b, s.Events())
	benchClose(b, s)
	opts.Resume = true
	b.ResetTimer()
	i := 0
	for b.Loop() {
		i++
		s, err := Start(context.Background(), opts, slog.New(slog.DiscardHandler))
		if err != nil {
			b.Fatal(err)
		}
		benchSend(b, s, fmt.Sprintf("resumed %d", i))
		if r := benchResult(b, s.Events()); r.IsError {
			b.Fatalf("result %+v", r)
		}
		b.StopTimer()
		benchClose(b, s)
		b.StartTimer()
	}
}
