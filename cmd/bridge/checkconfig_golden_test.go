package main

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/config"
)

var update = flag.Bool("update", false, "rewrite testdata/checkconfig/*.golden from the current output")

// goldenEnv is the environment of the check-config golden files: the
// example's variables, one set but empty, one whose value must never be
// printed.
func goldenEnv(name string) (string, bool) {
	switch name {
	case "EMPTY_TOKEN":
		return "", true
	case "PAT":
		return "$(secret-value", true
	case "WEB_TOKEN_ANA":
		return "test-web-token-ana-0123456789", true
	}
	return exampleEnv(name)
}

// TestCheckConfigGolden runs check-config on every config under
// testdata/checkconfig and on the embedded example and minimal configs, and
// compares the exit code, stdout and stderr byte for byte with the golden
// file (the config's directory written as $DIR). Run with -update to
// rewrite them after a deliberate change of a message.
func TestCheckConfigGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "checkconfig", "*.yaml"))
	if err != nil || len(paths) < 20 {
		t.Fatalf("want at least 20 configs under testdata/checkconfig, got %d (%v)", len(paths), err)
	}
	embedded := t.TempDir()
	for name, doc := range map[string][]byte{"example": config.Example(), "minimal": config.Minimal()} {
		p := filepath.Join(embedded, name+".yaml")
		if err := os.WriteFile(p, doc, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		t.Run(name, func(t *testing.T) {
			abs, err := filepath.Abs(path)
			if err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runCLI(t, goldenEnv, "check-config", "-config", abs)
			got := "exit " + strconv.Itoa(code) + "\n--- stdout\n" + stdout + "--- stderr\n" + stderr
			got = strings.ReplaceAll(got, filepath.Dir(abs), "$DIR")
			if strings.Contains(got, "secret-value") || strings.Contains(got, "test-") {
				t.Errorf("output carries a value from the environment:\n%s", got)
			}
			golden := filepath.Join("testdata", "checkconfig", name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("check-config %s:\n%s\nwant (%s):\n%s", name, got, golden, want)
			}
		})
	}
}
