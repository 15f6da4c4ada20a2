package sqldb

import "errors"

// Sentinel errors every repository of the store shares. Methods wrap them
// with context; test with errors.Is. Package store re-exports them.
var (
	// ErrNotFound: the row asked for does not exist.
	ErrNotFound = errors.New("not found")
	// ErrSchemaTooNew: the database was written by a newer bridge whose
	// schema this binary does not know. Open refuses it untouched.
	ErrSchemaTooNew = errors.New("database schema is newer than this binary supports")
	// ErrDuplicate: a row with this id already exists.
	ErrDuplicate = errors.New("duplicate")
	// ErrInvalidArgument: a required field is empty or a value is unknown.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrFull: the write failed because the database cannot be written
	// (disk full, quota, read-only file system, I/O error). Nothing of it
	// was committed; the same write succeeds once space returns (see
	// IsFull and DB.WriteHealth).
	ErrFull = errors.New("database cannot be written (disk full?)")
)
