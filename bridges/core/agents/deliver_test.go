package agents_test

import (
	"slices"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/configtest"
)

// TestSecretPaths: data_dir, the config file and the files a bot keeps
// credentials in are hidden from every agent.
func TestSecretPaths(t *testing.T) {
	cfg := &config.Config{DataDir: "/srv/data", Path: "/etc/bridge.yaml", Bots: []*config.Bot{
		{Name: "s", Platform: "slack"},
		{Name: "p", Platform: "whatsapp", Settings: configtest.FileSettings{File: "/var/lib/wa/phone.db"}},
	}}
	got := agents.SecretPaths(cfg)
	want := []string{"/srv/data", "/etc/bridge.yaml", "/var/lib/wa/phone.db"}
	if !slices.Equal(got, want) {
		t.Errorf("SecretPaths = %q, want %q", got, want)
	}
}
