package core_test

import (
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
)

// TestSessionReadersHaveAnOwner: the goroutine reading a live session's
// events outlives Run (agent processes belong to the pool's owner) but
// not its owner: WaitSessionReaders returns only once the pool has closed
// the session, and at once after that.
func TestSessionReadersHaveAnOwner(t *testing.T) {
	pool := bridgetest.NewFakePool(nil)
	defer pool.Close()
	h := start(t, setup{pool: pool})
	k := key("t1")
	h.send(k, "m1", "alice", "hello")
	h.waitText(k, "pong: hello")
	h.stop() // the worker stops; the agent process stays live in the pool

	waited := make(chan struct{})
	go func() { h.core.WaitSessionReaders(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("WaitSessionReaders returned while the session's reader still runs")
	case <-time.After(100 * time.Millisecond):
	}
	pool.Close() // the session's events end: its reader returns
	select {
	case <-waited:
	case <-time.After(waitTimeout):
		t.Fatal("WaitSessionReaders did not return after the pool closed")
	}
}
