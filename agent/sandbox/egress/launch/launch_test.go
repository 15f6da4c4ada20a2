package launch

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestUsage: bad arguments fail with 125 and say how to call it.
func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"prog"}, {"--"}} {
		var b strings.Builder
		if code := Run(args, &b); code != 125 || !strings.Contains(b.String(), "usage") {
			t.Errorf("Run(%q): code %d, %q", args, code, b.String())
		}
	}
}

// TestWithoutHandOff: a launcher started without the hand-off descriptor
// (this test binary, which is one through this package's init) fails with
// 125 and a clear reason, before it runs the program.
func TestWithoutHandOff(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(exe, Args(exe, []string{"/bin/echo", "ran"})[1:]...).CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 125 || strings.Contains(string(out), "ran") || !strings.Contains(string(out), Command+": no hand-off socket on descriptor 3") {
		t.Errorf("exit %v, output %q: want 125 and the reason, the program not run", err, out)
	}
}
