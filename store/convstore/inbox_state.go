package convstore

// InboxState is the delivery state of an inbox message. See the package
// documentation for the state machine.
type InboxState string

// Inbox states, in delivery order. The last three are final.
const (
	InboxPending   InboxState = "pending"   // accepted, not yet written to the agent
	InboxSent      InboxState = "sent"      // written to the agent's stdin
	InboxStarted   InboxState = "started"   // the CLI reported the message started
	InboxCompleted InboxState = "completed" // the CLI finished processing it
	InboxCancelled InboxState = "cancelled" // dropped (interrupt, !new, CLI cancelled it)
	InboxFailed    InboxState = "failed"    // given up on
)

// rank orders states along the delivery chain; final states share a rank.
// Unknown states have rank 0.
func (s InboxState) rank() int {
	switch s {
	case InboxPending:
		return 1
	case InboxSent:
		return 2
	case InboxStarted:
		return 3
	case InboxCompleted, InboxCancelled, InboxFailed:
		return 4
	default:
		return 0
	}
}

// Valid reports whether s is one of the defined states.
func (s InboxState) Valid() bool { return s.rank() > 0 }

// Final reports whether s is completed, cancelled or failed.
func (s InboxState) Final() bool { return s.rank() == 4 }

// CanMoveTo reports whether MarkInbox may move a message from s to next:
// to a later state (skipping allowed), or to s itself (a no-op). Final states
// never change, and nothing moves back; ResetForRedelivery is the only way
// back to pending.
func (s InboxState) CanMoveTo(next InboxState) bool {
	if !s.Valid() || !next.Valid() {
		return false
	}
	if s == next {
		return true
	}
	return !s.Final() && next.rank() > s.rank()
}

// movableFrom returns the states CanMoveTo lets move to s, s excluded.
func (s InboxState) movableFrom() []InboxState {
	var out []InboxState
	for _, from := range []InboxState{InboxPending, InboxSent, InboxStarted} {
		if from != s && from.CanMoveTo(s) {
			out = append(out, from)
		}
	}
	return out
}
