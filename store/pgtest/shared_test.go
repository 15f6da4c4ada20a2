package pgtest

import "testing"

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
