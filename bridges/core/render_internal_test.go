package core

import (
	"slices"
	"testing"

	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/configtest"
)

func TestSecretPaths(t *testing.T) {
	cfg := &config.Config{DataDir: "/srv/data", Path: "/etc/bridge.yaml", Bots: []*config.Bot{
		{Name: "s", Platform: "slack"},
		{Name: "p", Platform: "whatsapp", Settings: configtest.FileSettings{File: "/var/lib/wa/phone.db"}},
	}}
	got := secretPaths(cfg)
	want := []string{"/srv/data", "/etc/bridge.yaml", "/var/lib/wa/phone.db"}
	if !slices.Equal(got, want) {
		t.Errorf("secretPaths = %q, want %q", got, want)
	}
}
