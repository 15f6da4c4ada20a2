package app

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/agentbridge/agentbridge/internal/portowner"
)

// listenTaken explains a failed listen on http.listen addr when the
// address is in use: which process holds it (when /proc tells) and how to
// choose another port. Other errors are returned as they are.
func listenTaken(addr, configPath string, err error) error {
	if !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	holder := "another process"
	if o, ferr := portowner.Find("/proc", addr); ferr == nil {
		holder = fmt.Sprintf("process %d", o.PID)
		if o.Command != "" {
			holder += " (" + o.Command + ")"
		}
	} else if _, port, serr := net.SplitHostPort(addr); serr == nil {
		holder += fmt.Sprintf(" (`ss -ltnp 'sport = :%s'` shows which)", port)
	}
	return fmt.Errorf("http.listen %s is taken by %s: stop it, or choose another port with http.listen in %s "+
		"(the config `make run` writes reads BRIDGE_LISTEN: `BRIDGE_LISTEN=127.0.0.1:8080 make run`): %w",
		addr, holder, cmp.Or(configPath, "bridge.yaml" /* -config's default */), err)
}
