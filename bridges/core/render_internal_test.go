package core

import (
	"slices"
	"testing"

	"github.com/agentbridge/agentbridge/config"
)

// fileSettings stands in for the settings of an adapter that keeps a
// bot's credentials in a file (a WhatsApp device store).
type fileSettings struct{ file string }

func (s fileSettings) String() string        { return "files{" + s.file + "}" }
func (s fileSettings) Summary() string       { return "" }
func (s fileSettings) SecretFiles() []string { return []string{s.file} }

func TestSecretPaths(t *testing.T) {
	cfg := &config.Config{DataDir: "/srv/data", Path: "/etc/bridge.yaml", Bots: []*config.Bot{
		{Name: "s", Platform: "slack"},
		{Name: "p", Platform: "whatsapp", Settings: fileSettings{"/var/lib/wa/phone.db"}},
	}}
	got := secretPaths(cfg)
	want := []string{"/srv/data", "/etc/bridge.yaml", "/var/lib/wa/phone.db"}
	if !slices.Equal(got, want) {
		t.Errorf("secretPaths = %q, want %q", got, want)
	}
}
