// Package platformtest holds the small stand-ins of the platform contract
// (package bridges) that tests below the core share: a platform that
// accepts posts and edits and does nothing else, a Handler that records
// connection states and waits for them, an adapter's Run for the length
// of a test (Run) and the check of a Failure it ends with (WantFailure).
// Of the project it imports only bridges and internal/testkit, so the
// core's and its helpers' own tests can use it (bridges/kits/bridgetest, the
// full in-memory platform, sits above the core).
package platformtest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// Quiet is a platform that accepts posts and edits and does nothing else
// (no Ephemeral, no cards); Run blocks until its context ends.
type Quiet struct{}

// Limits returns no limits.
func (Quiet) Limits() bridges.Limits { return bridges.Limits{} }

// Run waits for ctx to end and returns nil.
func (Quiet) Run(ctx context.Context, _ bridges.Handler) error {
	<-ctx.Done()
	return nil
}

// Post accepts the message and returns an empty reference.
func (Quiet) Post(context.Context, bridges.ConversationKey, bridges.Message) (bridges.MessageRef, error) {
	return bridges.MessageRef{}, nil
}

// Edit accepts the edit.
func (Quiet) Edit(context.Context, bridges.MessageRef, bridges.Message) error { return nil }

// StateRecorder is a core stand-in that records an adapter's state
// reports; its other Handler methods are nil (calling one panics).
type StateRecorder struct {
	bridges.Handler
	mu     sync.Mutex
	states []bridges.BotState
}

// ReportState records s.
func (r *StateRecorder) ReportState(s bridges.BotState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states = append(r.states, s)
}

// States returns the states reported so far, oldest first.
func (r *StateRecorder) States() []bridges.BotState {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]bridges.BotState(nil), r.states...)
}

// WaitStates waits until n states were reported and returns them (all
// so far, oldest first); it fails tb after timeout.
func (r *StateRecorder) WaitStates(tb testing.TB, n int, timeout time.Duration) []bridges.BotState {
	tb.Helper()
	var got []bridges.BotState
	testkit.WaitUntilSeen(tb, fmt.Sprintf("%d connection states", n), timeout, func() (bool, string) {
		got = r.States()
		return len(got) >= n, fmt.Sprint(StateNames(got))
	})
	return got
}

// Last returns the last state reported (zero before any).
func (r *StateRecorder) Last() bridges.BotState {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.states) == 0 {
		return bridges.BotState{}
	}
	return r.states[len(r.states)-1]
}

// StateNames returns the ConnState of each state, in order.
func StateNames(states []bridges.BotState) []bridges.ConnState {
	var out []bridges.ConnState
	for _, s := range states {
		out = append(out, s.State)
	}
	return out
}
