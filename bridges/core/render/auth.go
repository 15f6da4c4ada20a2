package render

import (
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// AuthFailed reports whether a failed result means the agent has no valid
// credential for the model API: a 401 from the API ("Failed to
// authenticate"), or the CLI found none at all ("Not logged in").
func AuthFailed(r streamjson.Result) bool {
	if !r.IsError {
		return false
	}
	if r.APIErrorStatus == 401 {
		return true
	}
	t := strings.ToLower(r.Text)
	return strings.Contains(t, "not logged in") || strings.Contains(t, "failed to authenticate") ||
		strings.Contains(t, "invalid api key") || strings.Contains(t, "oauth token has expired")
}

// AuthHelp is what the conversation is told when the agent could not
// authenticate: what happened and what an admin must change (running
// /login, which the CLI suggests, is impossible from a chat).
func AuthHelp(profile string, r streamjson.Result) string {
	said, _, _ := strings.Cut(r.Text, " · ") // "Not logged in · Please run /login"
	return "⚠️ The agent could not sign in to the model API (" + textcut.OneLine(strings.TrimSpace(said), 200) + ").\n" +
		"An admin needs to give the agent profile " + CodeSpan(profile) + " a credential in the bridge's config, under " +
		CodeSpan("agents."+profile+".env") + ": " + CodeSpan("ANTHROPIC_API_KEY") + " (an API key) or " +
		CodeSpan("CLAUDE_CODE_OAUTH_TOKEN") + " (a subscription token from " + CodeSpan("claude setup-token") +
		"), then restart the bridge. Send your message again afterwards."
}
