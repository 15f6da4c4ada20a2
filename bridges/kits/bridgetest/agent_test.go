package bridgetest

import (
	"context"
	"errors"
	"testing"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/pool"
)

// After Close the fake pool hands out no session, as the real one: a
// session made then would never be closed, and a conversation that
// stopped meanwhile would drain it forever (a goroutine leak goleak saw).
func TestFakePoolRefusesAcquireAfterClose(t *testing.T) {
	p := NewFakePool(nil)
	s, err := p.Acquire(context.Background(), "k1", pool.Limit{}, agent.Options{SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	for range s.Events() { // closed by Close (else the test times out)
	}
	if _, err := p.Acquire(context.Background(), "k2", pool.Limit{}, agent.Options{SessionID: "s2"}); !errors.Is(err, pool.ErrClosed) {
		t.Errorf("Acquire after Close = %v, want pool.ErrClosed", err)
	}
}
