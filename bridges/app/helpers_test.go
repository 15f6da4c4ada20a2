package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"

	"github.com/agentbridge/agentbridge/internal/ci"
	"github.com/agentbridge/agentbridge/store/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	stopPostgres()
	os.Exit(code)
}

// pgServer is the test process's PostgreSQL server, started by the first
// test that needs one (needPostgres) and stopped by TestMain.
var pgServer struct {
	once sync.Once
	srv  *pgtest.Server
	err  error
}

// needPostgres returns the shared test server, starting it on first use;
// without PostgreSQL the test is skipped, or fails under CI.
func needPostgres(t testing.TB) *pgtest.Server {
	t.Helper()
	pgServer.once.Do(func() {
		pgServer.srv, pgServer.err = pgtest.Start(context.Background(), pgtest.Options{})
	})
	return pgtest.Require(t, pgServer.srv, pgServer.err)
}

// stopPostgres stops the shared server if a test started it.
func stopPostgres() {
	if pgServer.srv != nil {
		if err := pgServer.srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop PostgreSQL:", err)
		}
	}
}

// needBwrap skips without bubblewrap, except under CI (.ci/run
// installs it) where that is a failure.
func needBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if ci.Strict() {
			t.Fatalf("bwrap not on PATH under CI: %v", err)
		}
		t.Skip("bwrap not on PATH")
	}
}

// syncBuffer is a goroutine-safe bytes.Buffer for a logger's output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
