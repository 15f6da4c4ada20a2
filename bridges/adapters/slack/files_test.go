package slack

import (
	"bytes"
	"errors"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
)

func TestInboundFilesAndFetch(t *testing.T) {
	e := startOnFake(t)
	content := bytes.Repeat([]byte("0123456789"), 100) // 1,000 bytes
	f := e.fake.AddFile("log.txt", "text/plain", content)
	sent := e.fake.Send(slackfake.Msg{Channel: "D1", User: "U1", Text: "see attached", Files: []slackfake.File{f}})
	e.waitAcked(t, sent.TS)
	msgs := e.h.messagesFor(sent.TS)
	if len(msgs) != 1 || len(msgs[0].Files) != 1 {
		t.Fatalf("messages = %+v", msgs)
	}
	got := msgs[0].Files[0]
	want := bridges.File{ID: f.ID, Name: "log.txt", MimeType: "text/plain", Size: 1000, URL: f.URLPrivateDownload}
	if got != want {
		t.Errorf("file = %+v, want %+v", got, want)
	}

	tests := []struct {
		name    string
		file    bridges.File
		max     int64
		wantErr error
	}{
		{name: "within cap", file: got, max: 1000},
		{name: "no cap", file: got, max: 0},
		{name: "declared size over cap", file: got, max: 999, wantErr: ErrFileTooLarge},
		{name: "actual size over cap", file: bridges.File{ID: f.ID, Name: "log.txt", URL: got.URL}, max: 10, wantErr: ErrFileTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := e.b.FetchFile(t.Context(), tt.file, tt.max)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("FetchFile = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data, content) {
				t.Errorf("got %d bytes, want the file's %d", len(data), len(content))
			}
		})
	}
}

func TestFetchFileNeedsTheBotToken(t *testing.T) {
	fake := newFake(t)
	f := fake.AddFile("a.png", "image/png", []byte("png"))
	b, _ := newBridge(t, fake, "xoxb-not-the-right-one")
	if _, err := b.FetchFile(t.Context(), bridges.File{ID: f.ID, URL: f.URLPrivateDownload}, 100); err == nil {
		t.Fatal("download with a wrong token succeeded")
	}
	if n := fake.FileDownloads(); n != 1 {
		t.Errorf("%d download attempts, want 1", n)
	}
}

// The token is only sent to Slack hosts or the configured API host.
func TestFetchFileRefusesForeignHosts(t *testing.T) {
	fake := newFake(t)
	b, _ := newBridge(t, fake, slackfake.BotToken)
	_, err := b.FetchFile(t.Context(), bridges.File{ID: "F1", URL: "http://files.example.com/F1/x"}, 100)
	if err == nil {
		t.Fatal("FetchFile sent the token to a foreign host")
	}
}

// TestUploadFile: a file goes through Slack's three-step external upload
// into the conversation's thread, with the comment as mrkdwn; a 429 on
// the first step is waited out.
func TestUploadFile(t *testing.T) {
	fake := newFake(t)
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
