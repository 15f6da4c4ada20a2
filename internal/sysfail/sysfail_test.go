package sysfail

import (
	"errors"
	"syscall"
	"testing"
)

func TestError(t *testing.T) {
	if got := (Error{What: "bind"}).Error(); got != "bind" {
		t.Errorf("without a reason: %q", got)
	}
	err := error(Error{What: "connect to the socket", Err: syscall.ENOENT})
	if got := err.Error(); got != "connect to the socket: no such file or directory" {
		t.Errorf("with a reason: %q", got)
	}
	if !errors.Is(err, syscall.ENOENT) {
		t.Error("the reason does not unwrap")
	}
}
