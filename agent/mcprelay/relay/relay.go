// Package relay is the relay an agent of kind acp starts as the stdio MCP
// server of the bridge's tools: the bridge binary run as
//
//	bridge __mcp-relay SOCKET
//
// connects to the Unix socket SOCKET of its session (served by
// agent/mcprelay), copies its stdin to the socket and the socket to its
// stdout, and exits when either side closes. It carries nothing but the
// socket's path: no token, no environment.
//
// It runs from this package's init, like the sandbox's launcher
// (agent/sandbox/egress/launch): binaries that import this package (the
// bridge, through package agent, and tests whose binary serves as the
// relay) become the relay when started with Command. It imports only
// packages that every Go program initializes first (no net, no fmt; and
// internal/sysfail, which imports nothing), so
// that Go's initialization order runs it before the bridge's heavy
// dependencies start: a relay lives as long as its agent, inside the
// agent's cgroup.
package relay

import (
	"errors"
	"io"
	"os"
	"strconv"
	"syscall"

	"github.com/agentbridge/agentbridge/internal/sysfail"
)

// Command is the hidden first argument that makes a binary importing this
// package run as the relay. It is internal: not part of the bridge's CLI.
const Command = "__mcp-relay"

func init() {
	if len(os.Args) > 1 && os.Args[1] == Command {
		os.Exit(Run(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
}

// Args are the arguments, after the executable, that run the relay to
// socket (an absolute path).
func Args(socket string) []string { return []string{Command, socket} }

// Run is the relay; args are what follows Command: the socket's absolute
// path. It connects, then copies stdin to the socket and the socket to
// stdout until either ends, and returns the exit code: 0 when a side
// closed, 1 when the socket cannot be reached, 2 for bad arguments. The
// copy of stdin may go on blocking in a read after Run returns (the
// process exits then).
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 || len(args[0]) == 0 || args[0][0] != '/' {
		_, _ = io.WriteString(stderr, Command+": usage: "+Command+" SOCKET (an absolute path)\n")
		return 2
	}
	conn, err := Dial(args[0])
	if err != nil {
		_, _ = io.WriteString(stderr, Command+": "+err.Error()+"\n")
		return 1
	}
	defer conn.Close()
	done := make(chan error, 2)
	go func() {
		_, err := io.Copy(conn, stdin)
		done <- err
	}()
	go func() {
		_, err := io.Copy(stdout, conn)
		done <- err
	}()
	if err := <-done; err != nil && !errors.Is(err, os.ErrClosed) {
		_, _ = io.WriteString(stderr, Command+": "+err.Error()+"\n")
	}
	return 0
}

// Dial connects to the Unix socket at path (see ShortPath for a path too
// long for a socket address). The connection is non-blocking under Go's
// poller, so Close ends a read in progress.
func Dial(path string) (*os.File, error) {
	addr, release, err := ShortPath(path)
	if err != nil {
		return nil, sysfail.Error{What: "connect to " + path, Err: err}
	}
	defer release()
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return nil, sysfail.Error{What: "connect to " + path + ": socket", Err: err}
	}
	syscall.CloseOnExec(fd)
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: addr}); err != nil {
		syscall.Close(fd)
		return nil, sysfail.Error{What: "connect to " + path, Err: err}
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return nil, sysfail.Error{What: "connect to " + path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// MaxSocketPath is the longest socket path used as is: a sockaddr_un has
// room for 107 bytes on Linux, 103 on the BSDs.
const MaxSocketPath = 100

// ShortPath returns an address for the socket at path that fits a socket
// address, and a release to call once it has been used: path itself when
// it is short enough, else, on Linux, the socket's name under
// /proc/self/fd/N, N a descriptor of its directory held open until release
// (a state directory below a long data_dir is longer than a socket address
// allows).
func ShortPath(path string) (string, func(), error) {
	if len(path) <= MaxSocketPath {
		return path, func() {}, nil
	}
	slash := len(path) - 1
	for slash > 0 && path[slash] != '/' {
		slash--
	}
	dir, err := syscall.Open(path[:max(slash, 1)], syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, sysfail.Error{What: "socket path longer than " + strconv.Itoa(MaxSocketPath) + " bytes: open its directory", Err: err}
	}
	addr := "/proc/self/fd/" + strconv.Itoa(dir) + path[slash:]
	if len(addr) > MaxSocketPath {
		syscall.Close(dir)
		return "", nil, sysfail.Error{What: "socket name " + strconv.Quote(path[slash+1:]) + " is too long", Err: nil}
	}
	return addr, func() { syscall.Close(dir) }, nil
}
