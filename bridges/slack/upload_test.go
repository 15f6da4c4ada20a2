package slack

import (
	"bytes"
	"errors"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/slack/slackfake"
)

// TestUploadFile: a file goes through Slack's three-step external upload
// into the conversation's thread, with the comment as mrkdwn; a 429 on
// the first step is waited out.
func TestUploadFile(t *testing.T) {
	fake := slackfake.New(t)
	b, _ := newBridge(t, fake, slackfake.BotToken)
	key := bridges.ConversationKey{Bot: "team", Channel: "C0001", Thread: "1700000000.000100"}
	data := bytes.Repeat([]byte("line\n"), 1000)
	fake.Inject429("files.getUploadURLExternal", 1)
	if _, err := b.UploadFile(t.Context(), key, bridges.Upload{Name: "build.log", Data: data, Comment: "**the log**"}); err != nil {
		t.Fatal(err)
	}
	ups := fake.Uploads()
	if len(ups) != 1 {
		t.Fatalf("uploads = %+v", ups)
	}
	u := ups[0]
	if u.Name != "build.log" || u.Channel != "C0001" || u.ThreadTS != key.Thread || u.Comment != "*the log*" || !bytes.Equal(u.Content, data) {
		t.Errorf("upload = %+v (%d bytes)", u, len(u.Content))
	}
	for _, m := range []string{"files.getUploadURLExternal", "files.upload_url", "files.completeUploadExternal"} {
		if fake.CallCount(m) == 0 {
			t.Errorf("no %s call", m)
		}
	}
	if _, err := b.UploadFile(t.Context(), key, bridges.Upload{Name: "empty.txt"}); !errors.Is(err, ErrBadUpload) {
		t.Errorf("empty file: err = %v", err)
	}
	fake.FailMethod("files.completeUploadExternal", "not_in_channel", 1)
	if _, err := b.UploadFile(t.Context(), key, bridges.Upload{Name: "x.txt", Data: []byte("x")}); err == nil {
		t.Error("a refused completion was not reported")
	}
}

// TestStartThread: the message is posted at the top of the channel and
// its ts is the new conversation's thread.
func TestStartThread(t *testing.T) {
	fake := slackfake.New(t)
	b, _ := newBridge(t, fake, slackfake.BotToken)
	key, ref, err := b.StartThread(t.Context(), bridges.ConversationKey{Bot: "team", Channel: "C0001", Thread: "ignored"}, bridges.Message{Text: "⏰ scheduled: standup"})
	if err != nil {
		t.Fatal(err)
	}
	posts := fake.Posts()
	if len(posts) != 1 || posts[0].ThreadTS != "" || posts[0].Channel != "C0001" {
		t.Fatalf("posts = %+v", posts)
	}
	if key != (bridges.ConversationKey{Bot: "team", Channel: "C0001", Thread: posts[0].TS}) || ref.ID != posts[0].TS {
		t.Errorf("key = %+v, ref = %+v", key, ref)
	}
}
