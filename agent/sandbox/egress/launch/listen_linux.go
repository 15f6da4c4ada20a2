package launch

import "syscall"

// listen opens a close-on-exec TCP listener on 127.0.0.1:Port and
// returns its descriptor.
func listen() (int, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, failure{"listen: socket", err}
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: Port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		return -1, failure{"listen: bind 127.0.0.1:3128", err}
	}
	if err := syscall.Listen(fd, 512); err != nil {
		syscall.Close(fd)
		return -1, failure{"listen", err}
	}
	return fd, nil
}
