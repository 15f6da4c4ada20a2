package slack

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
)

func TestRedactor(t *testing.T) {
	r := newRedactor("xoxb-secret-1", "xapp-secret-2")
	in := `dial wss://wss.slack.com/link/?ticket=abc123&app_id=A1: token xoxb-secret-1 and xoxp-other-9, "xapp-1-zzz"`
	got := r.String(in)
	for _, leak := range []string{"secret-1", "secret-2", "abc123", "other-9", "1-zzz"} {
		if strings.Contains(got, leak) {
			t.Errorf("redacted text still has %q: %s", leak, got)
		}
	}
	if !strings.Contains(got, "app_id=A1") {
		t.Errorf("redaction removed too much: %s", got)
	}
}

// Errors no retry can fix are bridges.Permanent; 5xx, a lost connection,
// a rate limit that outlasts the context and a server that is gone are
// not.
func TestPostErrorsPermanentOrTransient(t *testing.T) {
	for _, code := range []string{"channel_not_found", "not_in_channel", "is_archived", "thread_not_found",
		"msg_too_long", "invalid_blocks", "no_text", "restricted_action", "account_inactive", "token_revoked", "invalid_auth"} {
		t.Run(code, func(t *testing.T) {
			fake := newFake(t)
			b, _ := newBridge(t, fake, slackfake.BotToken)
			fake.FailMethod("chat.postMessage", code, 1)
			_, err := b.Post(t.Context(), threadKey("1.1"), bridges.Message{Text: "x"})
			if !bridges.IsPermanent(err) || !strings.Contains(err.Error(), code) {
				t.Errorf("Post error %v: want permanent %s", err, code)
			}
		})
	}
	for _, code := range []string{"internal_error", "fatal_error", "service_unavailable", "request_timeout"} {
		t.Run(code, func(t *testing.T) {
			fake := newFake(t)
			b, _ := newBridge(t, fake, slackfake.BotToken)
			fake.FailMethod("chat.postMessage", code, 1)
			if _, err := b.Post(t.Context(), threadKey("1.1"), bridges.Message{Text: "x"}); err == nil || bridges.IsPermanent(err) {
				t.Errorf("Post error %v: want transient", err)
			}
		})
	}
	t.Run("edit of a deleted message", func(t *testing.T) {
		fake := newFake(t)
		b, _ := newBridge(t, fake, slackfake.BotToken)
		err := b.Edit(t.Context(), bridges.MessageRef{Key: threadKey("1.1"), ID: "9.9"}, bridges.Message{Text: "x"})
		if !bridges.IsPermanent(err) {
			t.Errorf("Edit error %v: want permanent message_not_found", err)
		}
	})
	t.Run("503", func(t *testing.T) {
		fake := newFake(t)
		b, _ := newBridge(t, fake, slackfake.BotToken)
		fake.LoseResponses("chat.postMessage", 1, 503)
		if _, err := b.Post(t.Context(), threadKey("1.1"), bridges.Message{Text: "x"}); err == nil || bridges.IsPermanent(err) {
			t.Errorf("Post error %v: want transient", err)
		}
	})
	t.Run("429 past the deadline", func(t *testing.T) {
		fake := newFake(t)
		b, _ := newBridge(t, fake, slackfake.BotToken)
		fake.Inject429("chat.postMessage", 5)
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		if _, err := b.Post(ctx, threadKey("1.1"), bridges.Message{Text: "x"}); err == nil || bridges.IsPermanent(err) {
			t.Errorf("Post error %v: want transient", err)
		}
	})
	t.Run("server gone", func(t *testing.T) {
		fake := newFake(t)
		b, _ := newBridge(t, fake, slackfake.BotToken)
		fake.Close()
		if _, err := b.Post(t.Context(), threadKey("1.1"), bridges.Message{Text: "x"}); err == nil || bridges.IsPermanent(err) {
			t.Errorf("Post error %v: want transient", err)
		}
	})
}
