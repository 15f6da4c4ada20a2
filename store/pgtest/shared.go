package pgtest

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// Shared is a test process's one server, started by the first test that
// needs it and stopped by TestMain:
//
//	var pg pgtest.Shared
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		if err := pg.Stop(); err != nil { ... }
//		os.Exit(code)
//	}
//
// The zero value is ready to use (Options{}); Need is safe for concurrent
// use.
type Shared struct {
	Options Options // how Need starts the server; set before the first Need

	once sync.Once
	srv  *Server
	err  error
}

// Need returns the shared server, starting it on first use; without
// PostgreSQL tb is skipped, or failed under CI (see Require). A failed
// start is not retried.
func (s *Shared) Need(tb testing.TB) *Server {
	tb.Helper()
	s.once.Do(func() { s.srv, s.err = Start(context.Background(), s.Options) })
	return Require(tb, s.srv, s.err)
}

// Stop stops the server if a test started it; call it once, after every
// test has ended.
func (s *Shared) Stop() error {
	if s.srv == nil {
		return nil
	}
	if err := s.srv.Stop(); err != nil {
		return fmt.Errorf("stop PostgreSQL: %w", err)
	}
	return nil
}
