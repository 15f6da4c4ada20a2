package core

import (
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/render"
)

// authFailed reports whether a failed result means the agent has no valid
// credential for the model API: a 401 from the API ("Failed to
// authenticate"), or the CLI found none at all ("Not logged in").
func authFailed(r streamjson.Result) bool {
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

// authHelp is what the conversation is told when the agent could not
// authenticate: what happened and what an admin must change (running
// /login, which the CLI suggests, is impossible from a chat).
func authHelp(profile string, r streamjson.Result) string {
	said, _, _ := strings.Cut(r.Text, " · ") // "Not logged in · Please run /login"
	return "⚠️ The agent could not sign in to the model API (" + oneLine(strings.TrimSpace(said), 200) + ").\n" +
		"An admin needs to give the agent profile " + codeSpan(profile) + " a credential in the bridge's config, under " +
		codeSpan("agents."+profile+".env") + ": " + codeSpan("ANTHROPIC_API_KEY") + " (an API key) or " +
		codeSpan("CLAUDE_CODE_OAUTH_TOKEN") + " (a subscription token from " + codeSpan("claude setup-token") +
		"), then restart the bridge. Send your message again afterwards."
}

// failureText is the answer shown for a failed result; auth reports that
// the agent could not authenticate (the answer then replaces the turn's text).
func (cv *conversation) failureText(r streamjson.Result) (text string, auth bool) {
	if authFailed(r) {
		cv.log.Warn("agent could not authenticate with the model API: set ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN in the profile's env",
			"profile", cv.profile.Name, "api_error_status", r.APIErrorStatus)
		return authHelp(cv.profile.Name, r), true
	}
	return render.ResultError(r), false
}
