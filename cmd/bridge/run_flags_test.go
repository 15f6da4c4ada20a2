package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

func botNames(cfg *config.Config) []string {
	var out []string
	for _, b := range cfg.Bots {
		out = append(out, b.Name)
	}
	return out
}

func TestParseRunFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    runFlags
		wantErr bool
	}{
		{nil, runFlags{config: "bridge.yaml"}, false},
		{[]string{"-demo"}, runFlags{config: "bridge.yaml", demo: true}, false},
		{[]string{"-config", "bridge.yaml", "-demo"}, runFlags{config: "bridge.yaml", explicit: true, demo: true}, false},
		{[]string{"-demo", "extra"}, runFlags{}, true},
		{[]string{"-nope"}, runFlags{}, true},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			got, err := parseRunFlags(tc.args, &bytes.Buffer{})
			var ue usageError
			if tc.wantErr {
				if !errors.As(err, &ue) {
					t.Errorf("error %v, want a usage error", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestLoadRunConfigFallsBackOnlyInDemo: only `bridge run -demo` without
// -config and without ./bridge.yaml uses the built-in minimal config;
// otherwise a missing file is a usage error.
func TestLoadRunConfigFallsBackOnlyInDemo(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent.yaml")
	noEnv := func(string) (string, bool) { return "", false }
	for _, rf := range []runFlags{
		{config: missing},
		{config: missing, explicit: true, demo: true},
	} {
		_, builtin, err := loadRunConfig(rf, noEnv)
		var ue usageError
		if !errors.As(err, &ue) || builtin || !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%+v: builtin %v, err %v; want a usage error for the missing file", rf, builtin, err)
		}
	}
	// The fallback itself (it needs the web platform in the config package).
	cfg, builtin, err := loadRunConfig(runFlags{config: missing, demo: true}, noEnv)
	if err != nil || !builtin {
		t.Fatalf("demo without a config: builtin %v, err %v", builtin, err)
	}
	if got := botNames(cfg); !slices.Equal(got, []string{"console"}) {
		t.Errorf("built-in config bots %v", got)
	}
}

// TestExampleConfigMinimal: `bridge example-config -minimal` prints the
// config `make run` writes, and it checks clean with an empty environment.
func TestExampleConfigMinimal(t *testing.T) {
	noEnv := func(string) (string, bool) { return "", false }
	code, out, stderr := runCLI(t, noEnv, "example-config", "-minimal")
	if code != exitOK || out != string(config.Minimal()) {
		t.Fatalf("example-config -minimal: code %d, stderr %q, output:\n%s", code, stderr, out)
	}
	path := filepath.Join(t.TempDir(), "bridge.yaml")
	testkit.WriteFile(t, path, out)
	code, summary, stderr := runCLI(t, noEnv, "check-config", "-config", path)
	if code != exitOK || !strings.Contains(summary, "bots (1):\n  console: platform=web") {
		t.Errorf("check-config on the minimal config: code %d, stderr %q, summary:\n%s", code, stderr, summary)
	}
	if code, _, _ := runCLI(t, noEnv, "example-config", "-minimal", "x"); code != exitUsage {
		t.Errorf("example-config -minimal x: code %d, want %d", code, exitUsage)
	}
}
