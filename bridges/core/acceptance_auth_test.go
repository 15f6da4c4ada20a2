package core_test

import (
	"strings"
	"testing"
)

// TestAcceptanceAuthFailureIsActionable: with the real CLI, a rejected key
// (401) and a missing credential each end the turn with a message that says
// what an admin must set, instead of the CLI's "Please run /login".
func TestAcceptanceAuthFailureIsActionable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		noKey   bool
		text    string
		cliSaid string
	}{
		{"rejected key", false, "[error 401] hello", "Failed to authenticate"},
		{"no credential", true, "hello", "Not logged in"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := startLive(t, liveSetup{noAPIKey: tc.noKey})
			k := key("auth")
			l.send(k, "m1", "alice", tc.text)
			m := l.waitLive(k, "could not sign in to the model API")
			for _, want := range []string{tc.cliSaid, "ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "agents.coder.env"} {
				if !strings.Contains(m.Text, want) {
					t.Errorf("the message lacks %q: %q", want, m.Text)
				}
			}
			if strings.Contains(m.Text, "/login") {
				t.Errorf("the message tells the user to run /login: %q", m.Text)
			}
		})
	}
}
