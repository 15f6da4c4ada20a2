// Command bashshim stands in for every program in the sandbox of the
// differential Bash test (config/policy/bashdiff_test.go): it appends the path
// it was started as and its arguments to /.bashdiff/log/execs, one
// record a line (fields separated by NUL, the line ended by "\x00\n"),
// and exits 0 without doing anything else.
package main

import (
	"os"
	"strings"
)

func main() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		exe = "?"
	}
	rec := exe + "\x00" + strings.Join(os.Args, "\x00") + "\x00\n"
	f, err := os.OpenFile("/.bashdiff/log/execs", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
	if err != nil {
		os.Exit(127)
	}
	_, _ = f.WriteString(rec)
	_ = f.Close()
}
