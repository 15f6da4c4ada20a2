package storecmd

import (
	"errors"
	"fmt"

	"github.com/agentbridge/agentbridge/internal/dirlock"
)

// LockDataDir makes this bridge the only owner of data_dir for its
// lifetime (the caller releases the lock when it stops; the kernel does if
// it is killed). Another bridge there is an error naming its pid and what
// to do: two bridges on one directory would recover, expire and answer
// each other's messages and approvals.
func LockDataDir(dir string) (*dirlock.Lock, error) {
	l, err := dirlock.Acquire(dir)
	var held *dirlock.HeldError
	switch {
	case errors.As(err, &held) && held.PID > 0:
		return nil, fmt.Errorf("data_dir %s is in use by another bridge (pid %d): stop that one first (kill -TERM %d), "+
			"or give this one a data_dir of its own", dir, held.PID, held.PID)
	case errors.As(err, &held):
		return nil, fmt.Errorf("data_dir %s is in use by another bridge (its pid could not be read from %s): stop that one first, "+
			"or give this one a data_dir of its own", dir, dirlock.FileName)
	case err != nil:
		return nil, fmt.Errorf("lock data_dir: %w", err)
	}
	return l, nil
}
