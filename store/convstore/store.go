// Package convstore is the conversations' part of the store: the
// conversations and their sessions (conversations.go, sessions.go), the
// inbox ledger of inbound messages (inbox.go, inbox_state.go), the outbox
// of final replies (outbox.go), the approvals audit log and the "Always
// allow" grants (approvals.go, grants.go), usage and spend (usage.go,
// spend.go), ratings of answers (feedback.go) and the operator view's
// queries over them (operator.go). It owns the tables that refer to
// conversations; package store composes it into the one Store.
//
// # Inbox state machine
//
//	pending ──► sent ──► started ──► completed | cancelled | failed
//	   ▲          │         │
//	   └──────────┴─────────┘  ResetForRedelivery only (after a crash)
//
// MarkInbox moves a message only forward: to any state later in the chain,
// skipping is allowed (pending → cancelled when a queued message is dropped),
// re-marking the current state is an idempotent no-op, and the three final
// states never change. Anything else returns ErrBadTransition. Moving sent or
// started back to pending is reserved for ResetForRedelivery, which also
// counts the attempt.
//
// The core records a message's way with three commits: pending (Enqueue,
// before the platform is acknowledged), sent with the conversation's
// activity (MarkSent), and its final state with the reply of the turn that
// handled it (EndTurn). Started is not recorded by the core (recovery
// treats sent and started alike); it stays a valid state.
//
// # Outbox and approvals
//
// Outbox rows go pending → posted, or pending → failed when the caller gives
// up on a reply (MarkOutboxFailed); MarkOutboxRetry counts a failed attempt
// that will be retried and remembers when the first one failed. An approval
// is open until its first decision is recorded; later decisions return
// ErrAlreadyDecided, so a click racing a timeout is decided exactly once.
package convstore

import (
	"errors"

	"github.com/agentbridge/agentbridge/store/sqldb"
)

// Errors of the conversations' state machines. Methods wrap them with
// context; test with errors.Is. The errors every repository shares are
// sqldb's (ErrNotFound, ErrInvalidArgument, …).
var (
	// ErrBadTransition: the requested state change is not allowed by the
	// state machine (see the package documentation).
	ErrBadTransition = errors.New("state transition not allowed")
	// ErrAlreadyDecided: the approval already has a decision.
	ErrAlreadyDecided = errors.New("approval already decided")
	// ErrSessionMoved: the conversation no longer has the session a caller
	// named (it moved, or a fresh one replaced it).
	ErrSessionMoved = errors.New("the conversation no longer has that session")
)

// Store is the conversations' repository. Create it with New; it is safe
// for concurrent use.
type Store struct {
	db *sqldb.DB
}

// New returns the conversations' repository on db.
func New(db *sqldb.DB) *Store { return &Store{db: db} }
