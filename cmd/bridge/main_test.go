package main

import (
	"bytes"
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// exampleEnv is the environment the embedded example config references.
func exampleEnv(name string) (string, bool) {
	switch name {
	case "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "DISCORD_BOT_TOKEN", "ANTHROPIC_API_KEY":
		return "test-" + strings.ToLower(name), true
	}
	return "", false
}

func runCLI(t *testing.T, env func(string) (string, bool), args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb, env)
	return code, out.String(), errb.String()
}

func TestExampleConfigRoundTrip(t *testing.T) {
	code, example, stderr := runCLI(t, exampleEnv, "example-config")
	if code != exitOK || len(example) < 200 {
		t.Fatalf("example-config: code %d, %d bytes, stderr %q", code, len(example), stderr)
	}
	path := filepath.Join(t.TempDir(), "x.yaml")
	testkit.WriteFile(t, path, example)
	code, out, stderr := runCLI(t, exampleEnv, "check-config", "-config", path)
	if code != exitOK {
		t.Fatalf("check-config on the example: code %d, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(out, "config ok") {
		t.Errorf("summary lacks 'config ok':\n%s", out)
	}
	for _, secret := range []string{"test-slack_bot_token", "test-slack_app_token", "test-discord_bot_token", "test-anthropic_api_key"} {
		if strings.Contains(out, secret) {
			t.Errorf("check-config summary leaks a secret %q:\n%s", secret, out)
		}
	}
	// Without the referenced variables the example is a config error.
	code, _, stderr = runCLI(t, func(string) (string, bool) { return "", false }, "check-config", "-config", path)
	if code != exitUsage || !strings.Contains(stderr, "SLACK_BOT_TOKEN") {
		t.Errorf("check-config without env: code %d, stderr:\n%s", code, stderr)
	}
}

func TestCheckConfigReportsAllProblemsWithLines(t *testing.T) {
	cfg := `data_dir: ./data
agents:
  coder:
    command: claude
    colour: blue
bots:
  - name: team
    platform: slack
    agent: nope
    slack: { bot_token: xoxb-1, app_token: xapp-1 }
`
	path := filepath.Join(t.TempDir(), "bad.yaml")
	testkit.WriteFile(t, path, cfg)
	code, _, stderr := runCLI(t, exampleEnv, "check-config", "-config", path)
	if code != exitUsage {
		t.Fatalf("exit code %d, want %d; stderr:\n%s", code, exitUsage, stderr)
	}
	for _, want := range []string{":5:", "colour", ":9:", `"nope"`} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "xoxb-1") {
		t.Errorf("stderr leaks a token:\n%s", stderr)
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"no command", nil, exitUsage},
		{"unknown command", []string{"frobnicate"}, exitUsage},
		{"bad flag", []string{"check-config", "-nope"}, exitUsage},
		{"missing file", []string{"check-config", "-config", filepath.Join(t.TempDir(), "absent.yaml")}, exitUsage},
		{"example-config args", []string{"example-config", "x"}, exitUsage},
		{"version", []string{"version"}, exitOK},
		{"attach without a conversation", []string{"attach", "-url", "http://127.0.0.1:1"}, exitUsage},
		{"attach, two conversations", []string{"attach", "-url", "http://127.0.0.1:1", "a", "b"}, exitUsage},
		{"export without a conversation", []string{"export", "-dir", "."}, exitUsage},
		{"import without a channel", []string{"import", "-url", "http://127.0.0.1:1", "-bot", "b", "f.jsonl"}, exitUsage},
		{"attach without a token", []string{"attach", "-url", "http://127.0.0.1:1", "c"}, exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, exampleEnv, tt.args...)
			if code != tt.want {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.want, stderr)
			}
		})
	}
}

// TestRunWithoutBwrap: a machine without bubblewrap cannot start sandboxed
// agents: the bridge refuses to start and says which package to install and
// how to opt out.
func TestRunWithoutBwrap(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the default sandbox is bwrap only on Linux")
	}
	cfg := `data_dir: ./data
http: { listen: "" }
agents:
  coder: {}
bots:
  - name: d
    platform: discord
    agent: coder
    discord: { token: "${DISCORD_BOT_TOKEN}", api_url: "http://127.0.0.1:1/api/v9/" }
`
	path := filepath.Join(t.TempDir(), "b.yaml")
	testkit.WriteFile(t, path, cfg)
	t.Setenv("PATH", t.TempDir()) // no bwrap (nor anything else) on PATH
	code, _, stderr := runCLI(t, exampleEnv, "run", "-config", path)
	if code == exitOK || !strings.Contains(stderr, `"bubblewrap"`) || !strings.Contains(stderr, "sandbox: none") {
		t.Fatalf("run without bwrap: code %d, stderr:\n%s", code, stderr)
	}
}
