//go:build !linux

package launch

import "github.com/agentbridge/agentbridge/internal/sysfail"

// listen: sandboxes with their own network namespace exist only on Linux
// (bubblewrap).
func listen() (int, error) {
	return -1, sysfail.Error{What: "listen: the launcher runs only on Linux", Err: nil}
}
