package config

import (
	"strings"
	"testing"
)

// TestNetworkSummary: check-config says what each network mode gives,
// warns for none, and says when a mode is not enforced (no sandbox).
func TestNetworkSummary(t *testing.T) {
	for _, tt := range []struct{ agent, want string }{
		{"{}", "network: proxy (the model endpoint and public hosts; loopback, private, metadata and the host's own addresses refused) allow=none deny=none"},
		{`{network: {allow: ["db.internal:5432"], deny: ["*.evil.example"]}}`, "allow=db.internal:5432 deny=*.evil.example"},
		{"{network: {mode: host}}", "network: host (the host's network, no egress control)"},
		{"{network: {mode: none}}", "network: none (WARNING: no network at all, not even the model API"},
		{"{sandbox: none}", "network: proxy NOT ENFORCED (sandbox none"},
	} {
		c, err := Parse([]byte("agents: {coder: "+tt.agent+"}\nbots:\n  - {name: b, platform: discord, agent: coder, discord: {token: t}}\n"),
			"bridge.yaml", func(string) (string, bool) { return "", false }, testPlatforms)
		if err != nil {
			t.Fatalf("%s: %v", tt.agent, err)
		}
		if s := c.Summary(); !strings.Contains(s, tt.want) {
			t.Errorf("%s: summary lacks %q:\n%s", tt.agent, tt.want, s)
		}
	}
}
