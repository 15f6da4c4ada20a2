package slackfake

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	slackapi "github.com/slack-go/slack"
)

// A bot token without a method's scope gets Slack's missing_scope answer
// with needed and provided; with the scope the same call succeeds.
func TestScopeEnforced(t *testing.T) {
	s := New(t, WithoutEcho(), WithScopes("chat:write", "files:read"))
	api := client(s, BotToken)
	_, err := api.UploadFileContext(t.Context(), slackapi.UploadFileParameters{
		Channel: "C1", Filename: "a.txt", FileSize: 3, Reader: bytes.NewReader([]byte("abc")),
	})
	var se slackapi.SlackErrorResponse
	if !errors.As(err, &se) || se.Err != "missing_scope" || se.Needed != "files:write" ||
		!strings.Contains(se.Provided, "chat:write") {
		t.Fatalf("upload without files:write = %#v, want missing_scope needing files:write", err)
	}
	if _, _, _, err := api.GetConversationRepliesContext(t.Context(), &slackapi.GetConversationRepliesParameters{ChannelID: "D1", Timestamp: "1.000001"}); !errors.As(err, &se) || se.Needed != "im:history" {
		t.Errorf("conversations.replies in a DM = %v, want missing_scope needing im:history", err)
	}
	if _, _, err := api.PostMessageContext(t.Context(), "C1", slackapi.MsgOptionText("hi", false)); err != nil {
		t.Errorf("chat.postMessage with chat:write = %v", err)
	}
	s.SetScopes(DefaultScopes()...)
	if _, err := api.UploadFileContext(t.Context(), slackapi.UploadFileParameters{
		Channel: "C1", Filename: "a.txt", FileSize: 3, Reader: bytes.NewReader([]byte("abc")),
	}); err != nil {
		t.Errorf("upload with the default scopes = %v", err)
	}
}

// A file download without files:read is refused like a foreign token.
func TestDownloadNeedsFilesRead(t *testing.T) {
	s := New(t, WithoutEcho(), WithScopes("chat:write"))
	f := s.AddFile("a.txt", "text/plain", []byte("abc"))
	var buf bytes.Buffer
	if err := client(s, BotToken).GetFileContext(t.Context(), f.URLPrivateDownload, &buf); err == nil {
		t.Fatal("download without files:read succeeded")
	}
	s.SetScopes("files:read")
	if err := client(s, BotToken).GetFileContext(t.Context(), f.URLPrivateDownload, &buf); err != nil || buf.String() != "abc" {
		t.Fatalf("download with files:read = %q, %v", buf.String(), err)
	}
}
