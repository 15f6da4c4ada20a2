package launch

import (
	"syscall"

	"github.com/agentbridge/agentbridge/internal/sysfail"
)

// listen opens a close-on-exec TCP listener on 127.0.0.1:Port and
// returns its descriptor.
func listen() (int, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, sysfail.Error{What: "listen: socket", Err: err}
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: Port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		return -1, sysfail.Error{What: "listen: bind 127.0.0.1:3128", Err: err}
	}
	if err := syscall.Listen(fd, 512); err != nil {
		syscall.Close(fd)
		return -1, sysfail.Error{What: "listen", Err: err}
	}
	return fd, nil
}
