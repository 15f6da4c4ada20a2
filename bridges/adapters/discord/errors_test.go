package discord

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
)

// Each close code Discord documents as final is a Failure that says what
// to do; the others are reconnected.
func TestCloseFailure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code   int
		want   error
		remedy string
		hint   string // a word the hint must contain
	}{
		{4004, ErrAuthentication, bridges.RemedyRestart, "Reset Token"},
		{4014, ErrDisallowedIntent, bridges.RemedyRestart, "Message Content Intent"},
		{4013, ErrGatewayFatal, bridges.RemedyUpgrade, "upgrade"},
		{4012, ErrGatewayFatal, bridges.RemedyUpgrade, "upgrade"},
		{4011, ErrGatewayFatal, bridges.RemedyRestart, "2,500 servers"},
		{4010, ErrGatewayFatal, bridges.RemedyUpgrade, "upgrade"},
	}
	for _, tc := range tests {
		f := closeFailure(tc.code)
		if f == nil {
			t.Errorf("closeFailure(%d) = nil, want a failure", tc.code)
			continue
		}
		if !errors.Is(f, tc.want) || f.Remedy != tc.remedy || !strings.Contains(f.Hint, tc.hint) ||
			!strings.Contains(f.Reason, strconv.Itoa(tc.code)) {
			t.Errorf("closeFailure(%d) = %+v, want %v, remedy %s, a hint with %q and the code in the reason", tc.code, f, tc.want, tc.remedy, tc.hint)
		}
	}
	for _, code := range []int{0, 1000, 1001, 1006, 1012, 4000, 4007, 4008, 4009} {
		if f := closeFailure(code); f != nil {
			t.Errorf("closeFailure(%d) = %v, want nil (reconnect)", code, f)
		}
	}
}

// Errors no retry can fix are bridges.Permanent; 5xx, a closed connection,
// a context that ends and a server that is gone are not.
func TestPostErrorsPermanentOrTransient(t *testing.T) {
	t.Parallel()
	key := bridges.ConversationKey{Bot: botName, Channel: "100"}
	for _, tc := range []struct {
		name      string
		prepare   func(f *discordfake.Fake) (context.Context, bridges.ConversationKey, bridges.Message)
		permanent bool
	}{
		{"10003 Unknown Channel", func(f *discordfake.Fake) (context.Context, bridges.ConversationKey, bridges.Message) {
			f.FailCreate(1, 404, 10003, "Unknown Channel")
			return context.Background(), key, bridges.Message{Text: "x"}
		}, true},
		{"50001 Missing Access", func(f *discordfake.Fake) (context.Context, bridges.ConversationKey, bridges.Message) {
			f.FailCreate(1, 403, 50001, "Missing Access")
			return context.Background(), key, bridges.Message{Text: "x"}
		}, true},
		{"50013 Missing Permissions", func(f *discordfake.Fake) (context.Context, bridges.ConversationKey, bridges.Message) {
			f.FailCreate(1, 403, 50013, "Missing Permissions")
			return context.Background(), key, bridges.Message{Text: "x"}
		}, true},
		{"50035 Invalid Form Body", func(f *discordfake.Fake) (context.Context, bridges.ConversationKey, bridges.Message) {
			f.FailCreate(1, 400, 50035, "Invalid Form Body")
			return context.Background(), key, bridges.Message{Text: "x"}
		}, true},
		{"401 token reset", func(f *discordfake.Fake) (context.Context, bridges.ConversationKey, bridges.Message) {
			f.ResetToken("another-token")
			return context.Background(), key, bridges.Message{Text: "x"}
		}, true},
		{"bad message", func(f *discordfake.Fake) (context.Context, bridges.ConversationKey, bridges.Message) {
			return context.Background(), key, bridges.Message{Text: " "}
		}, true},
		{"503", func(f *discordfake.Fake) (context.Context, bridges.ConversationKey, bridges.Message) {
			f.FailCreate(1, 503, 0, "upstream connect error")
			return context.Background(), key, bridges.Message{Text: "x"}
		}, false},
		{"500", func(f *discordfake.Fake) (context.Context, bridges.ConversationKey, bridges.Message) {
			f.FailCreate(1, 500, 0, "500: Internal Server Error")
			return context.Background(), key, bridges.Message{Text: "x"}
		}, false},
		{"connection closed", func(f *discordfake.Fake) (context.Context, bridges.ConversationKey, bridges.Message) {
			f.LoseResponses(1, 0)
			return context.Background(), key, bridges.Message{Text: "x"}
		}, false},
		{"context ends", func(f *discordfake.Fake) (context.Context, bridges.ConversationKey, bridges.Message) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, key, bridges.Message{Text: "x"}
		}, false},
		{"server gone", func(f *discordfake.Fake) (context.Context, bridges.ConversationKey, bridges.Message) {
			f.Close()
			return context.Background(), key, bridges.Message{Text: "x"}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newChannelFake(t)
			b := newTestBridge(t, testBot(f))
			ctx, k, m := tc.prepare(f)
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			_, err := b.Post(ctx, k, m)
			if err == nil || bridges.IsPermanent(err) != tc.permanent {
				t.Errorf("Post error %v: permanent %v, want %v", err, bridges.IsPermanent(err), tc.permanent)
			}
		})
	}
	t.Run("edit of a deleted message", func(t *testing.T) {
		t.Parallel()
		f := newChannelFake(t)
		b := newTestBridge(t, testBot(f))
		err := b.Edit(t.Context(), bridges.MessageRef{Key: key, ID: "123456"}, bridges.Message{Text: "x"})
		if !bridges.IsPermanent(err) {
			t.Errorf("Edit error %v: want permanent 10008 Unknown Message", err)
		}
	})
}
