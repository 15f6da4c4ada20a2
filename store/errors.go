package store

import "errors"

// Sentinel errors. Methods wrap them with context; test with errors.Is.
var (
	// ErrNotFound: the conversation, message or approval does not exist.
	ErrNotFound = errors.New("not found")
	// ErrSchemaTooNew: the database was written by a newer bridge whose
	// schema this binary does not know. Open refuses it untouched.
	ErrSchemaTooNew = errors.New("database schema is newer than this binary supports")
	// ErrBadTransition: the requested state change is not allowed by the
	// state machine (see the package documentation).
	ErrBadTransition = errors.New("state transition not allowed")
	// ErrAlreadyDecided: the approval already has a decision.
	ErrAlreadyDecided = errors.New("approval already decided")
	// ErrDuplicate: a row with this id already exists.
	ErrDuplicate = errors.New("duplicate")
	// ErrInvalidArgument: a required field is empty or a value is unknown.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrFull: the write failed because the database cannot be written
	// (disk full, quota, read-only file system, I/O error). Nothing of it
	// was committed; the same write succeeds once space returns (see
	// IsFull and Store.WriteHealth).
	ErrFull = errors.New("database cannot be written (disk full?)")
	// ErrLeaseHeld: another owner holds the lease (AcquireLease); the
	// error is a *LeaseHeldError naming it.
	ErrLeaseHeld = errors.New("lease held by another owner")
	// ErrLeaseLost: the lease is no longer the caller's — it expired and
	// another owner took it, or it was released — so the caller must not
	// act for its resource any more (RenewLease, ReleaseLease, WithLease).
	ErrLeaseLost = errors.New("lease lost")
)
