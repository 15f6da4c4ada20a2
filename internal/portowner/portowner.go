// Package portowner finds which process listens on a TCP port, from
// Linux's /proc: the listening sockets in /proc/net/tcp and tcp6, then the
// process whose file descriptors include one of them. Processes of other
// users are visible only to root; elsewhere than Linux nothing is found.
package portowner

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrNotFound: no process could be named (none listens, or its file
// descriptors cannot be read).
var ErrNotFound = errors.New("no process found listening on the port")

// maxCommand bounds Owner.Command.
const maxCommand = 120

// Owner is a process listening on the port.
type Owner struct {
	PID     int
	Command string // its program's name (argv[0]'s base name, at most 120 characters), without arguments
}

// tcpListen is the state column's value of a listening socket.
const tcpListen = "0A"

// Find returns a process listening on addr's TCP port (host:port; the
// host is ignored: a listener on any address of the port is in the way).
// It reads the /proc tree rooted at proc (normally "/proc").
func Find(proc, addr string) (Owner, error) {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return Owner{}, fmt.Errorf("find port owner: %w", err)
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return Owner{}, fmt.Errorf("find port owner: port %q: %w", p, err)
	}
	inodes := map[string]bool{}
	for _, name := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(filepath.Join(proc, "net", name))
		if err != nil {
			continue // no IPv6, or no /proc
		}
		listeners(b, uint16(port), inodes)
	}
	if len(inodes) == 0 {
		return Owner{}, ErrNotFound
	}
	return socketOwner(proc, inodes)
}

// listeners adds the inodes of the sockets listening on port in a
// /proc/net/tcp table to inodes.
func listeners(table []byte, port uint16, inodes map[string]bool) {
	sc := bufio.NewScanner(bytes.NewReader(table))
	sc.Scan() // header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != tcpListen {
			continue
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		if !ok {
			continue
		}
		if p, err := strconv.ParseUint(hexPort, 16, 16); err == nil && uint16(p) == port && f[9] != "0" {
			inodes[f[9]] = true
		}
	}
}

// socketOwner finds a process with a file descriptor on one of the socket
// inodes.
func socketOwner(proc string, inodes map[string]bool) (Owner, error) {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return Owner{}, fmt.Errorf("find port owner: %w", err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		fdDir := filepath.Join(proc, e.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue // gone, or another user's
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
			if err != nil || !strings.HasPrefix(link, "socket:[") {
				continue
			}
			if inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
				return Owner{PID: pid, Command: command(proc, e.Name())}, nil
			}
		}
	}
	return Owner{}, ErrNotFound
}

// command is a process's program name for people: the base name of its
// argv[0] ("" when unreadable). Its arguments are left out: another
// process's command line may carry secrets, and this ends up in logs.
func command(proc, pid string) string {
	b, err := os.ReadFile(filepath.Join(proc, pid, "cmdline"))
	if err != nil {
		return ""
	}
	argv0, _, _ := bytes.Cut(b, []byte{0})
	s := filepath.Base(strings.TrimSpace(string(argv0)))
	if s == "." || s == "/" {
		return ""
	}
	if r := []rune(s); len(r) > maxCommand {
		s = string(r[:maxCommand-1]) + "…"
	}
	return s
}
