// Package launch is the start of a sandboxed agent in network mode proxy:
// the bridge binary, run inside the sandbox's network namespace as
//
//	bridge __egress-launch -- PROGRAM ARGS...
//
// listens on 127.0.0.1:Port, hands the listening socket to the bridge over
// file descriptor 3 (a Unix socket pair the bridge passed down, see
// egress.HandOff), closes its own copies and replaces itself with PROGRAM
// (the CLI), same stdio and environment. The bridge then serves the
// agent's egress gate on that listener itself: no process of the bridge
// stays in the sandbox and no byte is relayed twice. PROGRAM never holds
// the listener nor the pair (both are closed before the exec), so the
// agent can neither accept its own proxy connections nor send the bridge
// anything on the pair.
//
// The launcher runs from this package's init, which Go runs before the
// initialisation of every package whose import path sorts after this one
// and does not depend on it (the language's initialisation order), so the
// bridge's heavy dependencies (web, chat clients, protocol buffers) never
// start in a launcher: it costs about a millisecond and 2 MB instead of the
// whole binary's start-up. Binaries that can be a launcher (the bridge,
// tests whose binary serves as one) import this package; its only
// dependencies are in the standard library, and internal/sysfail (which
// imports nothing).
package launch

import (
	"os"
	"strconv"
	"syscall"

	"github.com/agentbridge/agentbridge/internal/sysfail"
)

// Command is the hidden first argument that makes a binary importing
// this package run as a sandbox's launcher.
const Command = "__egress-launch"

// Port is where the agent's proxy listens inside a sandbox.
const Port = 3128

// handOffFD is the launcher's file descriptor of the hand-off pair: the
// first of exec.Cmd.ExtraFiles.
const handOffFD = 3

func init() {
	if len(os.Args) > 1 && os.Args[1] == Command {
		os.Exit(Run(os.Args[2:], os.Stderr))
	}
}

// Args returns the command line that runs argv behind the launcher; exe is
// a binary importing this package (the bridge) and argv[0] an absolute
// path.
func Args(exe string, argv []string) []string {
	return append([]string{exe, Command, "--"}, argv...)
}

// Run is the launcher; args are what follows Command. It returns only on
// failure, with exit code 125 and the reason written to stderr.
func Run(args []string, stderr interface{ WriteString(string) (int, error) }) int {
	if len(args) < 2 || args[0] != "--" {
		_, _ = stderr.WriteString(Command + ": usage: " + Command + " -- PROGRAM [ARGS...]\n")
		return 125
	}
	if err := launch(args[1:]); err != nil {
		_, _ = stderr.WriteString(Command + ": " + err.Error() + "\n")
	}
	return 125
}

// launch opens the listener, hands it over and execs argv; it returns
// only on failure. It uses system calls alone (see the package comment).
func launch(argv []string) error {
	var st syscall.Stat_t
	if err := syscall.Fstat(handOffFD, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFSOCK {
		return sysfail.Error{What: "no hand-off socket on descriptor 3 (the bridge starts launchers)", Err: nil}
	}
	if len(argv[0]) == 0 || argv[0][0] != '/' {
		return sysfail.Error{What: "program " + strconv.Quote(argv[0]) + " is not an absolute path", Err: nil}
	}
	ln, err := listen()
	if err != nil {
		syscall.Close(handOffFD)
		return err
	}
	err = syscall.Sendmsg(handOffFD, []byte{1}, syscall.UnixRights(ln), nil, 0)
	syscall.Close(ln)
	syscall.Close(handOffFD)
	if err != nil {
		return sysfail.Error{What: "hand the listener over", Err: err}
	}
	// No descriptor of this process but stdio is left open for the
	// program; the environment passes on unchanged.
	return sysfail.Error{What: "run " + argv[0], Err: syscall.Exec(argv[0], argv, os.Environ())}
}
