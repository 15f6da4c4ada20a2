package discord

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
)

// TestUploadFile: a file is one multipart message with an attachment in
// the conversation's thread, its comment converted, mentions off; files
// over Discord's limit are refused before any request.
func TestUploadFile(t *testing.T) {
	t.Parallel()
	f := discordfake.New(t)
	b := newTestBridge(t, testBot(f)) // REST only
	f.AddChannel("200", guild, "100", discordfake.ChannelPublicThread, "t")
	key := bridges.ConversationKey{Bot: botName, Channel: "100", Thread: "200"}
	data := bytes.Repeat([]byte("0123456789"), 300)
	ref, err := b.UploadFile(t.Context(), key, bridges.Upload{Name: "chart.png", Data: data, Comment: "**here** @everyone"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := f.Messages("200")
	if len(msgs) != 1 || msgs[0].ID != ref.ID || !slices.Equal(msgs[0].Attachments, []string{"chart.png"}) {
		t.Fatalf("messages = %+v, ref %+v", msgs, ref)
	}
	if msgs[0].Content != "**here** @everyone" || msgs[0].AllowedMentions == nil || len(*msgs[0].AllowedMentions) != 0 {
		t.Errorf("content %q, allowed mentions %v", msgs[0].Content, msgs[0].AllowedMentions)
	}
	if got, ok := f.Attachment(ref.ID, "chart.png"); !ok || !bytes.Equal(got, data) {
		t.Errorf("attachment holds %d bytes, want %d", len(got), len(data))
	}
	// No comment: the file alone is a valid message.
	if _, err := b.UploadFile(t.Context(), key, bridges.Upload{Name: "a.txt", Data: []byte("a")}); err != nil {
		t.Errorf("file without comment: %v", err)
	}
	before := f.RequestCount("POST /channels/{channel_id}/messages")
	if _, err := b.UploadFile(t.Context(), key, bridges.Upload{Name: "big.bin", Data: make([]byte, maxUploadBytes+1)}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("too large: err = %v", err)
	}
	if after := f.RequestCount("POST /channels/{channel_id}/messages"); after != before {
		t.Errorf("a too large file was sent anyway")
	}
}

// Without Attach Files (a bot invited with an older permission integer)
// Discord answers an upload 403 Missing Permissions: the adapter reports
// it as permanent (no retry), while a text message still goes out.
func TestUploadWithoutAttachFiles(t *testing.T) {
	t.Parallel()
	f := discordfake.NewWithOptions(t, discordfake.Options{Permissions: InvitePermissions &^ discordgo.PermissionAttachFiles})
	b := newTestBridge(t, testBot(f)) // REST only
	f.AddChannel("200", guild, "100", discordfake.ChannelPublicThread, "t")
	key := bridges.ConversationKey{Bot: botName, Channel: "100", Thread: "200"}
	_, err := b.UploadFile(t.Context(), key, bridges.Upload{Name: "chart.png", Data: []byte("png")})
	if err == nil || !strings.Contains(err.Error(), "50013") || !bridges.IsPermanent(err) {
		t.Fatalf("upload without Attach Files: err = %v, want a permanent 403 50013", err)
	}
	if len(f.Messages("200")) != 0 {
		t.Errorf("the file was posted anyway")
	}
	if _, err := b.Post(t.Context(), key, bridges.Message{Text: "still talking"}); err != nil {
		t.Errorf("text without Attach Files: %v", err)
	}
}
