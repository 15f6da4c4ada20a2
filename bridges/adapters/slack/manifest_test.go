package slack

import (
	"os"
	"slices"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
	"go.yaml.in/yaml/v3"
)

// The manifest asks for exactly the scopes and events the adapter uses,
// with Socket Mode and interactivity on.
func TestManifest(t *testing.T) {
	data, err := os.ReadFile("manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		OAuth struct {
			Scopes struct {
				Bot []string `yaml:"bot"`
			} `yaml:"scopes"`
		} `yaml:"oauth_config"`
		Settings struct {
			Events struct {
				Bot []string `yaml:"bot_events"`
			} `yaml:"event_subscriptions"`
			Interactivity struct {
				Enabled bool `yaml:"is_enabled"`
			} `yaml:"interactivity"`
			SocketMode bool `yaml:"socket_mode_enabled"`
		} `yaml:"settings"`
	}
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	// The fake's bot token carries slackfake.DefaultScopes, so every test
	// against the fake runs with exactly the manifest's scopes.
	wantScopes := slackfake.DefaultScopes()
	slices.Sort(wantScopes)
	wantEvents := []string{"app_mention", "app_uninstalled", "message.channels", "message.groups", "message.im", "message.mpim", "tokens_revoked"}
	slices.Sort(m.OAuth.Scopes.Bot)
	slices.Sort(m.Settings.Events.Bot)
	if !slices.Equal(m.OAuth.Scopes.Bot, wantScopes) {
		t.Errorf("bot scopes = %v, want %v", m.OAuth.Scopes.Bot, wantScopes)
	}
	if !slices.Equal(m.Settings.Events.Bot, wantEvents) {
		t.Errorf("bot events = %v, want %v", m.Settings.Events.Bot, wantEvents)
	}
	if !m.Settings.SocketMode || !m.Settings.Interactivity.Enabled {
		t.Errorf("socket mode %v, interactivity %v: both must be on", m.Settings.SocketMode, m.Settings.Interactivity.Enabled)
	}
}
