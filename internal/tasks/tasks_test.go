package tasks

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestGroup: Close waits for the running goroutines and refuses new ones
// until Open.
func TestGroup(t *testing.T) {
	var g Group
	release, ran := make(chan struct{}), make(chan struct{}, 3)
	if !g.Go(func() { <-release; ran <- struct{}{} }) {
		t.Fatal("Go refused on a new group")
	}
	closed := make(chan struct{})
	go func() { g.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a goroutine runs")
	default:
	}
	close(release)
	<-closed
	if len(ran) != 1 {
		t.Fatal("the goroutine did not finish before Close returned")
	}
	if g.Go(func() { ran <- struct{}{} }) {
		t.Error("Go ran a goroutine after Close")
	}
	g.Open()
	if !g.Go(func() { ran <- struct{}{} }) {
		t.Error("Go refused after Open")
	}
	g.Close()
	if len(ran) != 2 {
		t.Errorf("%d goroutines ran, want 2", len(ran))
	}
}
