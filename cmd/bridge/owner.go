package main

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/agentbridge/agentbridge/internal/dirlock"
	"github.com/agentbridge/agentbridge/internal/portowner"
)

// lockDataDir makes this bridge the only owner of data_dir for its
// lifetime (the caller releases the lock when it stops; the kernel does if
// it is killed). Another bridge there is an error naming its pid and what
// to do: two bridges on one directory would recover, expire and answer
// each other's messages and approvals.
func lockDataDir(dir string) (*dirlock.Lock, error) {
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
		addr, holder, cmp.Or(configPath, defaultConfigPath), err)
}
