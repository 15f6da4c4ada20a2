package pgtest

import (
	"testing"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

func TestSharedStartsOnceAndStops(t *testing.T) {
	var s Shared
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop of a server never started: %v", err)
	}
	first := s.Need(t)
	if again := s.Need(t); again != first {
		t.Fatal("a second Need started another server")
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := first.admin.Ping(); err == nil {
		t.Fatal("the server's admin connection is still open after Stop")
	}
}

// TestStartForStopsAtCleanup: StartFor's server serves the test and is
// stopped by its cleanup.
func TestStartForStopsAtCleanup(t *testing.T) {
	var srv *Server
	var err error
	ran := testkit.RunTB(func(tb *testkit.FakeTB) {
		srv = StartFor(tb)
		err = srv.admin.Ping()
	})
	if ran.Skipped() {
		testkit.SkipOrFail(t, "no PostgreSQL")
	}
	if f := ran.Failure(); f != "" || err != nil {
		t.Fatalf("StartFor: failure %q, ping %v", f, err)
	}
	if err := srv.admin.Ping(); err == nil {
		t.Fatal("the server's admin connection is still open after the test's cleanup")
	}
}
