package markdowntest

import (
	"os"
	"strings"
	"testing"
)

// Golden compares got, the output for the input file in (NAME.md), with
// NAME.golden next to it; with update it rewrites that file instead.
func Golden(tb testing.TB, in, got string, update bool) {
	tb.Helper()
	path := strings.TrimSuffix(in, ".md") + ".golden"
	if update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		tb.Errorf("output differs from %s (run with -update to accept):\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}
