package slack

import (
	"context"
	"errors"
	"net/http"

	slackapi "github.com/slack-go/slack"

	"github.com/agentbridge/agentbridge/bridges"
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
