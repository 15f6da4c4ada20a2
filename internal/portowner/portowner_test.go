package portowner

import (
	"errors"
	"net"
	"os"
	"runtime"
	"testing"
)

// The test process's own listener is found, with its pid and command.
func TestFindOwnListener(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	o, err := Find("/proc", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if o.PID != os.Getpid() || o.Command != "portowner.test" {
		t.Errorf("owner = %+v, want pid %d running portowner.test (no arguments)", o, os.Getpid())
	}
	// Another host of the same port is in the way as well.
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	if o, err := Find("/proc", "0.0.0.0:"+port); err != nil || o.PID != os.Getpid() {
		t.Errorf("Find on 0.0.0.0:%s = %+v, %v", port, o, err)
	}
}

// A closed port has no owner; a bad address is an error.
func TestFindNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if _, err := Find("/proc", addr); !errors.Is(err, ErrNotFound) {
		t.Errorf("Find on a closed port = %v, want ErrNotFound", err)
	}
	if _, err := Find("/proc", "no-port"); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("Find(no-port) = %v, want an address error", err)
	}
}

// The table parser keeps only listening sockets of the port.
func TestListeners(t *testing.T) {
	table := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:24F8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0000000000000000 100 0 0 10 0
   1: 0100007F:24F8 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 222 1 0000000000000000 20 4 30 10 -1
   2: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 333 1 0000000000000000 100 0 0 10 0
`
	got := map[string]bool{}
	listeners([]byte(table), 9464, got)
	if len(got) != 1 || !got["111"] {
		t.Errorf("listeners = %v, want only inode 111", got)
	}
}
