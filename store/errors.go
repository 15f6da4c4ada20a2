package store

import (
	"github.com/agentbridge/agentbridge/store/convstore"
	"github.com/agentbridge/agentbridge/store/coord"
	"github.com/agentbridge/agentbridge/store/dbcopy"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

// Sentinel errors, each the value of the package that returns it, so that
// errors.Is holds whichever name a caller tests with. Methods wrap them
// with context.
var (
	// ErrNotFound: the conversation, message or approval does not exist.
	ErrNotFound = sqldb.ErrNotFound
	// ErrSchemaTooNew: the database was written by a newer bridge whose
	// schema this binary does not know. Open refuses it untouched.
	ErrSchemaTooNew = sqldb.ErrSchemaTooNew
	// ErrBadTransition: the requested state change is not allowed by the
	// state machine (see package convstore).
	ErrBadTransition = convstore.ErrBadTransition
	// ErrAlreadyDecided: the approval already has a decision.
	ErrAlreadyDecided = convstore.ErrAlreadyDecided
	// ErrDuplicate: a row with this id already exists.
	ErrDuplicate = sqldb.ErrDuplicate
	// ErrInvalidArgument: a required field is empty or a value is unknown.
	ErrInvalidArgument = sqldb.ErrInvalidArgument
	// ErrFull: the write failed because the database cannot be written
	// (disk full, quota, read-only file system, I/O error). Nothing of it
	// was committed; the same write succeeds once space returns (see
	// IsFull and Store.WriteHealth).
	ErrFull = sqldb.ErrFull
	// ErrLeaseHeld: another owner holds the lease (AcquireLease); the
	// error is a *LeaseHeldError naming it.
	ErrLeaseHeld = coord.ErrLeaseHeld
	// ErrLeaseLost: the lease is no longer the caller's — it expired and
	// another owner took it, or it was released — so the caller must not
	// act for its resource any more (RenewLease, ReleaseLease, WithLease).
	ErrLeaseLost = coord.ErrLeaseLost
	// ErrFenced: a write of a fenced store (Store.Fenced) or under a lease
	// (WithLease, PutSessionState) was refused because the lease is no
	// longer the writer's; nothing was written. It also matches
	// ErrLeaseLost.
	ErrFenced = coord.ErrFenced
	// ErrSessionMoved: the conversation no longer has the session a caller
	// named (it moved, or a fresh one replaced it).
	ErrSessionMoved = convstore.ErrSessionMoved
	// ErrInUse: another bridge holds the database (HoldOwner).
	ErrInUse = sqldb.ErrInUse
	// ErrTargetNotEmpty: Copy's target already holds data.
	ErrTargetNotEmpty = dbcopy.ErrTargetNotEmpty
)
