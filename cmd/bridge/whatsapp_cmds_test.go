package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// writeWAConfig writes a config with a slack bot and a whatsapp bot
// "phone" and returns its path.
func writeWAConfig(t *testing.T) string {
	t.Helper()
	cfg := `data_dir: ./data
http: { listen: "" }
agents:
  coder: {}
bots:
  - name: phone
    platform: whatsapp
    agent: coder
  - name: team
    platform: slack
    agent: coder
    slack: { bot_token: xoxb-1, app_token: xapp-1 }
`
	path := filepath.Join(t.TempDir(), "wa.yaml")
	testkit.WriteFile(t, path, cfg)
	return path
}

// `bridge run` with a WhatsApp bot that was never linked fails at start
// with the command that links it, and creates no device store.
func TestRunUnlinkedWhatsAppBot(t *testing.T) {
	t.Parallel()
	path := writeWAConfig(t)
	code, _, stderr := runCLI(t, exampleEnv, "run", "-config", path)
	want := "run `bridge whatsapp-link -config " + path + " -bot phone` first"
	if code != exitUsage || !strings.Contains(stderr, `whatsapp bot "phone" is not linked`) || !strings.Contains(stderr, want) {
		t.Fatalf("run with an unlinked whatsapp bot: code %d, stderr:\n%s\nwant %q", code, stderr, want)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), "data", "whatsapp-phone.db")); !os.IsNotExist(err) {
		t.Errorf("the start-up check created the device store: %v", err)
	}
}

func TestWhatsAppLinkUsage(t *testing.T) {
	t.Parallel()
	path := writeWAConfig(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no -bot", []string{"-config", path}, "-bot is required"},
		{"unknown bot", []string{"-config", path, "-bot", "nope"}, `no bot named "nope"`},
		{"not a whatsapp bot", []string{"-config", path, "-bot", "team"}, `bot "team" is a slack bot, not a whatsapp bot`},
		{"stray argument", []string{"-config", path, "-bot", "phone", "extra"}, "unexpected arguments"},
		{"bad flag", []string{"-config", path, "-bot", "phone", "-qr"}, "flag provided but not defined"},
		{"missing config", []string{"-config", path + ".missing", "-bot", "phone"}, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, exampleEnv, append([]string{"whatsapp-link"}, tt.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, stderr, exitUsage, tt.want)
			}
		})
	}
}
