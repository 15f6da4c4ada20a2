package slack

import (
	"errors"
	"fmt"
	"net/http"

	slackapi "github.com/slack-go/slack"

	"github.com/agentbridge/agentbridge/bridges"
)

// token names the credential a Slack call was made with.
type token int

const (
	botToken token = iota // slack.bot_token (xoxb…): auth.test and the Web API
	appToken              // slack.app_token (xapp…): apps.connections.open
)

// setting is the config key that holds the token.
func (t token) setting() string {
	if t == appToken {
		return "slack.app_token"
	}
	return "slack.bot_token"
}

// what is the token as an operator knows it.
func (t token) what() string {
	if t == appToken {
		return "the app-level token"
	}
	return "the bot token"
}

// howToGet says where a fresh token of this kind comes from.
func (t token) howToGet() string {
	if t == appToken {
		return "generate an app-level token (xapp…) with the connections:write scope under your Slack app's Basic Information → App-Level Tokens"
	}
	return "copy the Bot User OAuth Token (xoxb…) from your Slack app's OAuth & Permissions page"
}

// errorCode is the Slack error code of err ("" when it has none).
func errorCode(err error) string {
	if se, ok := errors.AsType[slackapi.SlackErrorResponse](err); ok {
		return se.Err
	}
	if err == nil {
		return ""
	}
	return err.Error() // socketmode passes some codes on as plain errors
}

// failureOf classifies an error of a call made with tok: a
// *bridges.Failure (wrapping ErrFatal) when retrying cannot help — the
// token is wrong, revoked, of the wrong kind or lacks a scope — with what
// to do, or nil. Reason and Hint name the setting, never the token.
func failureOf(err error, tok token, call string) *bridges.Failure {
	if err == nil {
		return nil
	}
	code := errorCode(err)
	reason, hint := "", ""
	set := tok.setting()
	switch code {
	case "invalid_auth", "not_authed", "invalid_token":
		reason = fmt.Sprintf("Slack rejected %s (%s on %s)", tok.what(), code, call)
		hint = fmt.Sprintf("%s, put it in %s, then restart the bridge", tok.howToGet(), set)
	case "token_revoked":
		reason = fmt.Sprintf("%s was revoked (token_revoked on %s)", tok.what(), call)
		if tok == appToken {
			hint = fmt.Sprintf("%s, put it in %s, then restart the bridge", tok.howToGet(), set)
		} else {
			hint = "the app was uninstalled or its token revoked: reinstall the app to the workspace (OAuth & Permissions → Install to Workspace), put the new Bot User OAuth Token in slack.bot_token, then restart the bridge"
		}
	case "token_expired":
		reason = fmt.Sprintf("%s expired (token_expired on %s)", tok.what(), call)
		hint = "the bridge does not refresh rotating tokens: turn token rotation off for the app (OAuth & Permissions), reinstall it, put the new token in " + set + ", then restart the bridge"
	case "account_inactive":
		reason = fmt.Sprintf("%s belongs to a deactivated user or workspace (account_inactive on %s)", tok.what(), call)
		hint = "install the app again from an active account, put its new tokens in slack.bot_token and slack.app_token, then restart the bridge"
	case "not_allowed_token_type":
		reason = fmt.Sprintf("%s is the wrong kind of token (not_allowed_token_type on %s)", set, call)
		hint = "put the Bot User OAuth Token (xoxb…) in slack.bot_token and an app-level token (xapp…) in slack.app_token, then restart the bridge"
	case "missing_scope":
		needed := "a scope"
		if se, ok := errors.AsType[slackapi.SlackErrorResponse](err); ok && se.Needed != "" {
			needed = "the " + se.Needed + " scope"
		} else if tok == appToken {
			needed = "the connections:write scope"
		}
		reason = fmt.Sprintf("%s lacks %s (missing_scope on %s)", tok.what(), needed, call)
		if tok == appToken {
			hint = "give the app-level token the connections:write scope (or generate a new one with it) under Basic Information → App-Level Tokens, put it in slack.app_token, then restart the bridge"
		} else {
			hint = "add the scope under OAuth & Permissions → Bot Token Scopes (or paste bridges/slack/manifest.yaml under App Manifest), reinstall the app to the workspace, then restart the bridge"
		}
	default:
		sc, ok := errors.AsType[slackapi.StatusCodeError](err)
		if !ok || (sc.Code != http.StatusUnauthorized && sc.Code != http.StatusForbidden && sc.Code != http.StatusNotFound) {
			return nil
		}
		reason = fmt.Sprintf("Slack answered HTTP %d to %s", sc.Code, call)
		hint = fmt.Sprintf("check slack.api_url and %s (%s), then restart the bridge", set, tok.howToGet())
	}
	return &bridges.Failure{Reason: reason, Remedy: bridges.RemedyRestart, Hint: hint,
		Err: fmt.Errorf("%s: %s: %w", call, code, ErrFatal)}
}

// revokedFailure is the failure after Slack announced mid-run that the
// app's tokens were revoked or the app uninstalled (event: its type).
func revokedFailure(event string) *bridges.Failure {
	return &bridges.Failure{
		Reason: fmt.Sprintf("Slack revoked the app's tokens (%s event)", event),
		Remedy: bridges.RemedyRestart,
		Hint:   "reinstall the app to the workspace (OAuth & Permissions → Install to Workspace), put the new tokens in slack.bot_token and slack.app_token, then restart the bridge",
		Err:    fmt.Errorf("%s: %w", event, ErrFatal),
	}
}
