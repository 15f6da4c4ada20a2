package egress

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
)

// ProxyURL is the proxy URL a sandboxed agent is given: the listener its
// launcher opens (package launch) on 127.0.0.1:launch.Port.
const ProxyURL = "http://127.0.0.1:3128"

// HandOff is the bridge's end of one launcher's hand-off (package launch):
// a Unix socket pair whose other end (Child) the launcher gets as
// descriptor 3, and on which it sends the listener it opened.
type HandOff struct {
	own   *net.UnixConn
	child *os.File
}

// NewHandOff makes the pair. Pass Child as the first of the command's
// ExtraFiles, call Started once the command started (or failed to), and
// Receive for the listener; Close when done.
func NewHandOff() (*HandOff, error) {
	// Close-on-exec before any other start can inherit them (as package
	// net does where sockets cannot be made so at once).
	syscall.ForkLock.RLock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
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
