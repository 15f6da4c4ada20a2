//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package dirlock

import (
	"fmt"
	"os"
	"runtime"
)

// tryLock fails: this system has no flock, and a lock that cannot be held
// must not pretend to be.
func tryLock(*os.File) (bool, error) {
	return false, fmt.Errorf("directory locks are not supported on %s", runtime.GOOS)
}
