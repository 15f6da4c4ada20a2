//go:build !linux

package agent

import "errors"

// TreeRSS is only implemented on Linux.
func TreeRSS(pid int) (int64, error) {
	return 0, errors.New("process memory is only read on Linux")
}
