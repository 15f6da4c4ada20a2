// Package ownership is the seam between the core and what decides which of
// several bridge replicas sharing one database runs each conversation
// (bridges/features/replica implements it; bridges/app wires it into the core). It
// holds only the contract: the core never imports an implementation, and
// an implementation needs nothing of the core's internals.
package ownership

import (
	"context"
	"errors"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// Ownership decides which of several bridge replicas sharing one database
// runs each conversation (bridges/features/replica, wired by bridges/app). Without
// one (CoreOptions.Ownership nil) this process runs every conversation.
// The core calls it from its goroutines, never with its own locks held.
type Ownership interface {
	// Claim reports whether this replica may run conversation id now,
	// taking it when no replica holds it (Tenure).
	Claim(ctx context.Context, id string) (Tenure, error)
	// Holding reports, on this process's clock and without the database,
	// whether this replica still holds conversation id's lease: held and
	// not past the time by which it must have been renewed
	// (store.Lease.ValidUntil). A replica paused past its lease (a long
	// GC, SIGSTOP, a VM frozen) finds it false as soon as it runs again;
	// the worker asks before each post to the platform, which no fencing
	// token can guard.
	Holding(id string) bool
	// Forward tells the replica holding conversation id about work that
	// arrived here: new ledger messages (a nil), or a click on a card.
	Forward(ctx context.Context, id string, a *bridges.Action)
	// SaveSession stores the files of a session after a turn ended (a
	// Claude Code session's transcripts, an ACP agent's record of its
	// session and its private home: the implementation tells the kind
	// from stateDir, so the core need not);
	// RestoreSession puts them back in stateDir before a resume and
	// returns a stamp of the files it restored: equal stamps mean the same
	// stored files, "" that none are stored. The core starts an agent
	// with the stamp (agent.Options.ResumeStamp), so that an agent this
	// replica started earlier from other files is never reused.
	SaveSession(ctx context.Context, id, sessionID, stateDir string)
	RestoreSession(ctx context.Context, id, sessionID, stateDir string) (stamp string, err error)
}

// Tenure is what Ownership.Claim grants.
type Tenure struct {
	// OK: this replica may run the conversation now.
	OK bool
	// Recover is true when this begins a tenure after another: what an
	// earlier holder left in flight (messages sent to its agent, open
	// cards, unposted replies) is the new holder's to recover.
	Recover bool
	// Lease is the conversation's lease for this tenure. The worker's
	// store writes are fenced by it (store.Store.Fenced): once another
	// replica took the conversation over, they are refused
	// (store.ErrFenced) and the worker stops (bridges/core). Nil: unfenced.
	Lease *store.Lease
}

// ErrHeldElsewhere: another replica runs the conversation; the work was
// recorded and handed to it.
var ErrHeldElsewhere = errors.New("conversation is run by another replica")

// SessionRelease asks the replica running conversation From to give its
// session SessionID up to conversation To (a !resume by By).
type SessionRelease struct {
	From, To     string // conversation ids
	SessionID    string
	ByID, ByName string
	// Until is when the asker stops waiting; the holder refuses a request
	// it receives later (clocks of replicas agree to well under
	// the core's wait for an answer minus the time a holder may take).
	Until time.Time
}

// SessionReleased is the answer to a SessionRelease, for the replica
// running conversation To.
type SessionReleased struct {
	To, SessionID string
	Summary       string // the session's first prompt, on success
	Failure       string // "" when the session moved to To; else a ReleaseBusy, ReleaseMoved or a reason
}

// Failures of a SessionReleased.
const (
	ReleaseBusy  = "busy"  // worker.ErrSessionBusy
	ReleaseMoved = "moved" // store.ErrSessionMoved
)

// SessionForwarder is an optional ability of an Ownership: it carries a
// !resume's request to the replica running the session's conversation and
// the answer back. Neither waits for the other side; a lost signal is
// covered by the store (the core looks there when it stops waiting).
type SessionForwarder interface {
	ForwardRelease(ctx context.Context, r SessionRelease) error
	AnswerRelease(ctx context.Context, a SessionReleased) error
}

// BackSignaler is an optional ability of an Ownership: the first sign
// that a platform answers again (an event, a call that worked) may come
// to a replica other than the one whose replies wait for it. The core
// says when replies of a bot wait here (WaitingFor, as it schedules their
// retry) and when its platform answered here (PlatformBack); the
// Ownership tells the replica that waits, which then wakes them
// (bridges/features/replica's back.go). Both are cheap when nothing waits and must
// not block for long.
type BackSignaler interface {
	WaitingFor(ctx context.Context, bot string)
	PlatformBack(ctx context.Context, bot string)
}

// BackSignalTimeout bounds a signal about a platform's return to the
// other replicas (ownership.BackSignaler).
const BackSignalTimeout = 2 * time.Second
