package egress

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"syscall"
)

// LauncherCommand is the hidden first argument that makes the bridge
// binary run as a sandbox's launcher (see MaybeLaunch):
//
//	bridge __egress-launch -- PROGRAM ARGS...
//
// Inside the sandbox's network namespace it listens on
// 127.0.0.1:ProxyPort, hands the listening socket to the bridge over file
// descriptor 3 (a Unix socket pair the bridge passed down, see HandOff),
// closes its own copies and replaces itself with PROGRAM (the CLI), same
// stdio and environment. The bridge then serves the agent's gate on that
// listener itself: no process of the bridge stays in the sandbox and no
// byte is relayed twice. PROGRAM never holds the listener nor the pair
// (both close on exec), so the agent can neither accept its own proxy
// connections nor send the bridge anything on the pair.
const LauncherCommand = "__egress-launch"

// ProxyPort is where the agent's proxy listens inside a sandbox: the
// agent's HTTP(S)_PROXY is http://127.0.0.1:ProxyPort.
const ProxyPort = 3128

// ProxyURL is the proxy URL the agent is given (ProxyPort on 127.0.0.1).
const ProxyURL = "http://127.0.0.1:3128"

// handOffFD is the launcher's file descriptor of the hand-off pair: the
// first of exec.Cmd.ExtraFiles.
const handOffFD = 3

// LauncherArgs returns the command line that runs argv behind the
// launcher; exe is the bridge binary.
func LauncherArgs(exe string, argv []string) []string {
	return append([]string{exe, LauncherCommand, "--"}, argv...)
}

// MaybeLaunch runs the launcher when the process was started as one
// (os.Args[1] == LauncherCommand): it never returns then (the process
// becomes the program, or exits 125 on failure). Otherwise it returns at
// once. Call it first in main, and in TestMain of tests whose binary
// serves as the launcher.
func MaybeLaunch() {
	if len(os.Args) > 1 && os.Args[1] == LauncherCommand {
		os.Exit(RunLauncher(os.Args[2:], os.Stderr))
	}
}

// RunLauncher is the launcher (see LauncherCommand); args are what follows
// LauncherCommand. It returns only on failure, with exit code 125 and the
// reason written to stderr.
func RunLauncher(args []string, stderr io.Writer) int {
	if len(args) < 2 || args[0] != "--" {
		fmt.Fprintf(stderr, "%s: usage: %s -- PROGRAM [ARGS...]\n", LauncherCommand, LauncherCommand)
		return 125
	}
	argv := args[1:]
	if err := launch(argv); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", LauncherCommand, err)
	}
	return 125
}

// launch opens the listener, hands it over and execs argv; it returns
// only on failure.
func launch(argv []string) error {
	prog, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("find %s: %w", argv[0], err)
	}
	pair := os.NewFile(handOffFD, "hand-off")
	if pair == nil {
		return errors.New("no hand-off descriptor 3")
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", ProxyPort))
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	lf, err := ln.(*net.TCPListener).File()
	ln.Close()
	if err != nil {
		return fmt.Errorf("listener file: %w", err)
	}
	err = sendFD(pair, lf)
	lf.Close()
	pair.Close()
	if err != nil {
		return fmt.Errorf("hand the listener over: %w", err)
	}
	// Every descriptor this process opened is close-on-exec (Go's
	// default); stdio and the environment pass on unchanged.
	return syscall.Exec(prog, argv, os.Environ())
}

// sendFD sends f's descriptor over the Unix socket pair with one byte of
// data (a descriptor travels only with data).
func sendFD(pair, f *os.File) error {
	c, err := net.FileConn(pair)
	if err != nil {
		return err
	}
	defer c.Close()
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return fmt.Errorf("descriptor %d is not a Unix socket", handOffFD)
	}
	_, _, err = uc.WriteMsgUnix([]byte{1}, syscall.UnixRights(int(f.Fd())), nil)
	return err
}

// HandOff is the bridge's end of one launcher's hand-off: a Unix socket
// pair whose other end (Child) the launcher gets as descriptor 3.
type HandOff struct {
	own   *net.UnixConn
	child *os.File
}

// NewHandOff makes the pair. Pass Child as the first of the command's
// ExtraFiles, call Started once the command started (or failed to), and
// Receive for the listener; Close when done.
func NewHandOff() (*HandOff, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("egress: hand-off socket pair: %w", err)
	}
	own := os.NewFile(uintptr(fds[0]), "hand-off")
	c, err := net.FileConn(own)
	own.Close()
	if err != nil {
		syscall.Close(fds[1])
		return nil, fmt.Errorf("egress: hand-off: %w", err)
	}
	return &HandOff{own: c.(*net.UnixConn), child: os.NewFile(uintptr(fds[1]), "hand-off child")}, nil
}

// Child is the launcher's end, for exec.Cmd.ExtraFiles[0].
func (h *HandOff) Child() *os.File { return h.child }

// Started closes the bridge's copy of the launcher's end (the command has
// its own now), so that Receive sees end of file when the launcher ends
// without handing a listener over.
func (h *HandOff) Started() { h.child.Close() }

// Receive waits for the launcher's listener and returns it. It fails when
// the launcher ended without one, when what arrived is not one listening
// socket, or when the hand-off was closed. Call it once.
func (h *HandOff) Receive() (net.Listener, error) {
	buf, oob := make([]byte, 1), make([]byte, syscall.CmsgSpace(4*4))
	n, oobn, _, _, err := h.own.ReadMsgUnix(buf, oob)
	if n == 0 && oobn == 0 {
		if err == nil || errors.Is(err, io.EOF) {
			return nil, errors.New("egress: the launcher ended without handing its listener over")
		}
		return nil, fmt.Errorf("egress: hand-off: %w", err)
	}
	fds, err := parseRights(oob[:oobn])
	if err != nil {
		return nil, err
	}
	if n != 1 || len(fds) != 1 {
		for _, fd := range fds {
			syscall.Close(fd)
		}
		return nil, fmt.Errorf("egress: hand-off brought %d bytes and %d descriptors, want 1 and 1", n, len(fds))
	}
	f := os.NewFile(uintptr(fds[0]), "agent proxy listener")
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("egress: the handed-over descriptor is no listener: %w", err)
	}
	return ln, nil
}

// parseRights returns the descriptors of SCM_RIGHTS messages in oob.
func parseRights(oob []byte) ([]int, error) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, fmt.Errorf("egress: hand-off control message: %w", err)
	}
	var fds []int
	for _, m := range msgs {
		got, err := syscall.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		fds = append(fds, got...)
	}
	return fds, nil
}

// Close closes the bridge's end (a Receive waiting fails) and the
// launcher's end if Started was not called.
func (h *HandOff) Close() {
	h.own.Close()
	h.child.Close()
}
