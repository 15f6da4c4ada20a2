// Package platformtest holds the small stand-ins of the platform contract
// (package bridges) that tests below the core share: a platform that
// accepts posts and edits and does nothing else, a Handler that records
// connection states. It imports only bridges, so the core's and its
// helpers' own tests can use it (bridges/bridgetest, the full in-memory
// platform, sits above the core).
package platformtest

import (
	"context"
	"sync"

	"github.com/agentbridge/agentbridge/bridges"
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
