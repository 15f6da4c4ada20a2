package pool

// Copies of the agent package's test helpers that the pool's tests use
// (test files cannot be shared across packages).

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// fakeCLI writes script as an executable fake claude (as in the agent
// package's tests) and returns its path.
func fakeCLI(t *testing.T, script string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fake-claude")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
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
func benchClose(b *testing.B, s *agent.Session) {
	b.Helper()
	if err := s.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	for range s.Events() {
	}
}

// benchSend sends text as a new message.
func benchSend(b *testing.B, s *agent.Session, text string) {
	b.Helper()
	if err := s.Send(context.Background(), streamjson.UserMessage{UUID: uuid.NewString(), Text: text}); err != nil {
		b.Fatal(err)
	}
}

// benchFollowUpLive: one message on a live process → its result (as
// BenchmarkFollowUpLive of the agent package).
func benchFollowUpLive(b *testing.B, opts agent.Options, _ *harness) {
	s, err := agent.Start(context.Background(), opts, slog.New(slog.DiscardHandler))
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
