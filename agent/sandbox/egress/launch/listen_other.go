//go:build !linux

package launch

// listen: sandboxes with their own network namespace exist only on Linux
// (bubblewrap).
func listen() (int, error) {
	return -1, failure{"listen: the launcher runs only on Linux", nil}
}
