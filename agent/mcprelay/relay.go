// Package mcprelay carries the bridge's in-process MCP servers (the
// agent tools: send_file, schedules, …) to an agent that can only start
// stdio MCP servers: an agent of kind acp, which gets them in the
// mcpServers of session/new and session/load.
//
// Two ends:
//
//   - Server (server.go), in the bridge: one Unix socket per MCP server of
//     a session, in the session's state directory, answering each
//     newline-delimited JSON-RPC message with the session's own server
//     (agent.MCPServer.HandleMCP).
//   - the relay (Run), what the agent starts as the stdio MCP server: it
//     copies its stdin to the socket and the socket to its stdout, and
//     exits when either side closes.
//
// The relay is the bridge binary run as
//
//	bridge __mcp-relay SOCKET
//
// and carries nothing but the socket's path: no token, no environment.
// Whoever can connect to the socket can call the session's tools, so the
// socket is reachable only where the session's state directory is (its
// own sandbox).
//
// The relay runs from this package's init, like the sandbox's launcher
// (agent/sandbox/egress/launch): binaries that import this package (the
// bridge, through package agent, and tests whose binary serves as the
// relay) become the relay when started with Command. Its only
// dependencies are in the standard library, so a relay costs a few MB,
// not the whole bridge's start.
package mcprelay

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
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
	if len(args) != 1 || !filepath.IsAbs(args[0]) {
		fmt.Fprintln(stderr, Command+": usage: "+Command+" SOCKET (an absolute path)")
		return 2
	}
	conn, err := Dial(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", Command, err)
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
	if err := <-done; err != nil && !errors.Is(err, net.ErrClosed) {
		fmt.Fprintf(stderr, "%s: %v\n", Command, err)
	}
	return 0
}

// Dial connects to the Unix socket at path (see shortPath for a path too
// long for a socket address).
func Dial(path string) (net.Conn, error) {
	addr, release, err := shortPath(path)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", path, err)
	}
	defer release()
	conn, err := net.Dial("unix", addr)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", path, err)
	}
	return conn, nil
}

// maxSocketPath is the longest socket path used as is: a sockaddr_un has
// room for 107 bytes on Linux, 103 on the BSDs.
const maxSocketPath = 100

// shortPath returns an address for the socket at path that fits a socket
// address, and a release to call once it has been used: path itself when
// it is short enough, else, on Linux, the socket's name under
// /proc/self/fd/N, N a descriptor of its directory held open until release
// (a state directory below a long data_dir is longer than a socket
// address allows).
func shortPath(path string) (string, func(), error) {
	if len(path) <= maxSocketPath {
		return path, func() {}, nil
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return "", nil, fmt.Errorf("socket path longer than %d bytes: open its directory: %w", maxSocketPath, err)
	}
	addr := fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), filepath.Base(path))
	if len(addr) > maxSocketPath {
		dir.Close()
		return "", nil, fmt.Errorf("socket name %q is too long", filepath.Base(path))
	}
	return addr, func() { dir.Close() }, nil
}
