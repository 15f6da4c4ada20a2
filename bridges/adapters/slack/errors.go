package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	slackapi "github.com/slack-go/slack"

	"github.com/agentbridge/agentbridge/bridges"
)

// Sentinel errors of the Slack adapter.
var (
	// ErrFileTooLarge: FetchFile stopped at its size cap.
	ErrFileTooLarge = errors.New("slack: file larger than the allowed size")
	// ErrBadUpload: UploadFile was given an empty or too large file.
	ErrBadUpload = errors.New("slack: file cannot be uploaded")
	// ErrNoConfig: New was given no bot or no slack section.
	ErrNoConfig = errors.New("slack: missing slack configuration")
	// ErrFatal wraps errors that retrying cannot fix (bad or revoked
	// tokens, a missing scope): Run returns them.
	ErrFatal = errors.New("slack: fatal error")

	// errSuperseded: a rate-limited Edit gave way to a newer one.
	errSuperseded = errors.New("superseded by a newer edit")
)

// permanentCodes are the Slack error codes of chat.postMessage,
// chat.update and the file upload methods that no retry can fix: the
// channel or thread is gone or closed to the bot, the message is invalid,
// the bot's token no longer works. Other codes (internal_error,
// fatal_error, service_unavailable, request_timeout, ratelimited and any
// code not listed) are transient: the core tries again later.
var permanentCodes = map[string]bool{
	// The conversation.
	"channel_not_found": true, "not_in_channel": true, "is_archived": true,
	"thread_not_found": true, "message_not_found": true, "cant_update_message": true,
	"edit_window_closed": true, "cannot_reply_to_message": true,
	"restricted_action": true, "restricted_action_read_only_channel": true,
	"restricted_action_thread_only_channel": true, "restricted_action_non_threadable_channel": true,
	"restricted_action_thread_locked": true, "team_access_not_granted": true,
	"ekm_access_denied": true, "access_denied": true,
	// The message.
	"msg_too_long": true, "msg_blocks_too_long": true, "no_text": true,
	"invalid_blocks": true, "invalid_blocks_format": true, "invalid_attachments": true,
	"too_many_attachments": true, "invalid_metadata_format": true,
	"invalid_metadata_schema": true, "metadata_too_large": true, "invalid_arguments": true,
	"invalid_arg_name": true, "invalid_form_data": true, "file_not_found": true,
	"invalid_channel": true, "duplicate_channel_not_found": true,
	// The bot (removed, uninstalled, deactivated) or its token.
	"invalid_auth": true, "not_authed": true, "account_inactive": true,
	"token_revoked": true, "token_expired": true, "no_permission": true,
	"missing_scope": true, "not_allowed_token_type": true, "org_login_required": true,
}

// isPermanent reports whether an error of a Slack Web API call is one no
// retry can fix: a code in permanentCodes, or an HTTP 4xx other than 408
// and 429. Network errors, timeouts, 5xx and 429 are transient.
func isPermanent(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if se, ok := errors.AsType[slackapi.SlackErrorResponse](err); ok {
		return permanentCodes[se.Err]
	}
	if sc, ok := errors.AsType[slackapi.StatusCodeError](err); ok {
		return sc.Code >= 400 && sc.Code < 500 && sc.Code != http.StatusRequestTimeout && sc.Code != http.StatusTooManyRequests
	}
	return false
}

// classify returns wrapped (the error Post, Edit or UploadFile returns
// for cause) marked with bridges.Permanent when cause is permanent.
func classify(cause, wrapped error) error {
	if isPermanent(cause) {
		return bridges.Permanent(wrapped)
	}
	return wrapped
}

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
			hint = "add the scope under OAuth & Permissions → Bot Token Scopes (or paste bridges/adapters/slack/manifest.yaml under App Manifest), reinstall the app to the workspace, then restart the bridge"
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

// redactor removes credentials from text that may be logged: the
// configured tokens, anything shaped like a Slack token (xoxb-…, xapp-…)
// and websocket tickets in URLs.
type redactor struct {
	secrets []string
}

func newRedactor(secrets ...string) redactor {
	var r redactor
	for _, s := range secrets {
		if s != "" {
			r.secrets = append(r.secrets, s)
		}
	}
	return r
}

// String redacts s.
func (r redactor) String(s string) string {
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, "[REDACTED]")
	}
	s = redactPrefixed(s, "xox", func(rest string) bool { return len(rest) > 1 && rest[1] == '-' })
	s = redactPrefixed(s, "xapp-", func(string) bool { return true })
	s = redactPrefixed(s, "ticket=", func(string) bool { return true })
	return s
}

// Err redacts an error's message ("" for nil).
func (r redactor) Err(err error) string {
	if err == nil {
		return ""
	}
	return r.String(err.Error())
}

// redactPrefixed replaces every token that starts with prefix (and passes
// ok on the text after the prefix) up to the next delimiter.
func redactPrefixed(s, prefix string, ok func(rest string) bool) string {
	var b strings.Builder
	for {
		i := strings.Index(s, prefix)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		rest := s[i+len(prefix):]
		if !ok(rest) {
			b.WriteString(s[:i+len(prefix)])
			s = rest
			continue
		}
		end := strings.IndexAny(rest, " \t\n\"'&<>,;)")
		if end < 0 {
			end = len(rest)
		}
		b.WriteString(s[:i+len(prefix)])
		b.WriteString("[REDACTED]")
		s = rest[end:]
	}
}
