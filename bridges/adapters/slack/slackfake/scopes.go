package slackfake

import (
	"slices"
	"strings"
)

// DefaultScopes returns the bot token's scopes unless WithScopes says
// otherwise: exactly the bot scopes of bridges/adapters/slack/manifest.yaml (a test
// there keeps the two equal).
func DefaultScopes() []string {
	return []string{"app_mentions:read", "channels:history", "chat:write", "files:read", "files:write",
		"groups:history", "im:history", "mpim:history", "reactions:write", "users:read"}
}

// RequiredScope is the bot scope Slack's documentation lists for a Web API
// method the fake serves ("files.download" stands for fetching a file's
// url_private), or "" when the method needs none from a bot token
// (auth.test; apps.connections.open takes the app-level token). For the
// history methods the channel's type decides, as in Slack's diagnostics.
func RequiredScope(method, channel string) string {
	switch method {
	case "chat.postMessage", "chat.update", "chat.postEphemeral",
		"chat.startStream", "chat.appendStream", "chat.stopStream",
		"assistant.threads.setStatus": // accepts chat:write since 2026-03
		return "chat:write"
	case "conversations.replies", "conversations.history":
		switch channelType(channel) {
		case "im":
			return "im:history"
		case "mpim":
			return "mpim:history"
		default:
			return "channels:history"
		}
	case "conversations.info":
		switch channelType(channel) {
		case "im":
			return "im:read"
		case "mpim":
			return "mpim:read"
		default:
			return "channels:read"
		}
	case "files.getUploadURLExternal", "files.completeUploadExternal":
		return "files:write"
	case "files.download":
		return "files:read"
	case "reactions.add", "reactions.remove":
		return "reactions:write"
	case "users.info":
		return "users:read"
	default:
		return ""
	}
}

// WithScopes sets the bot token's scopes (default DefaultScopes). A call
// whose RequiredScope the token lacks answers missing_scope with needed and
// provided, like Slack; a file download answers 403.
func WithScopes(scopes ...string) Option {
	return func(s *Server) { s.scopes = slices.Clone(scopes) }
}

// SetScopes changes the bot token's scopes, as reinstalling the app with
// another manifest does.
func (s *Server) SetScopes(scopes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scopes = slices.Clone(scopes)
}

// lacksScopeLocked returns the scope a call of method needs and the token
// lacks, or "". s.mu is held.
func (s *Server) lacksScopeLocked(method, channel string) string {
	needed := RequiredScope(method, channel)
	if needed == "" || slices.Contains(s.scopes, needed) {
		return ""
	}
	return needed
}

// providedLocked is the token's scope list as Slack reports it in
// "provided". s.mu is held.
func (s *Server) providedLocked() string {
	return strings.Join(s.scopes, ",")
}
