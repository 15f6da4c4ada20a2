package discordfake

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
)

// upload posts a message with one file as multipart/form-data, as
// discordgo does.
func upload(t *testing.T, f *Fake, channel string) (*http.Response, apiError) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("payload_json", `{"content":"file"}`)
	fw, _ := mw.CreateFormFile("files[0]", "a.txt")
	_, _ = fw.Write([]byte("abc"))
	_ = mw.Close()
	req, _ := http.NewRequest("POST", strings.TrimSuffix(f.URL(), "/")+"/channels/"+channel+"/messages", &body)
	req.Header.Set("Authorization", "Bot "+f.Token())
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e apiError
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return resp, e
}

// Without Attach Files an upload answers 403 Missing Permissions (50013)
// while a text message still goes out; DMs need no permission; with the
// default permissions the upload succeeds. Without Create Public Threads
// starting a thread answers the same 403.
func TestPermissionsEnforced(t *testing.T) {
	t.Parallel()
	f := NewWithOptions(t, Options{Permissions: DefaultPermissions &^ PermissionAttachFiles &^ PermissionCreatePublicThreads})
	f.AddChannel("100", "1", "", ChannelGuildText, "general")
	f.AddChannel("300", "", "", ChannelDM, "")
	if resp, e := upload(t, f, "100"); resp.StatusCode != http.StatusForbidden || e.Code != codeMissingPermissions {
		t.Fatalf("upload without Attach Files = %d %+v, want 403 code 50013", resp.StatusCode, e)
	}
	if len(f.Messages("100")) != 0 {
		t.Error("the refused upload was stored")
	}
	resp, _ := do(t, f, "POST", "/channels/100/messages", map[string]any{"content": "hi"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("text without Attach Files = %d", resp.StatusCode)
	}
	msgs := f.Messages("100")
	if len(msgs) != 1 {
		t.Fatalf("messages = %+v", msgs)
	}
	if resp, e := do(t, f, "POST", "/channels/100/messages/"+msgs[0].ID+"/threads", map[string]any{"name": "t"}); resp.StatusCode != http.StatusForbidden || e.Code != codeMissingPermissions {
		t.Errorf("thread without Create Public Threads = %d %+v, want 403 code 50013", resp.StatusCode, e)
	}
	if resp, _ := upload(t, f, "300"); resp.StatusCode != http.StatusOK {
		t.Errorf("upload in a DM = %d, want 200", resp.StatusCode)
	}
	f.SetPermissions(DefaultPermissions)
	if resp, e := upload(t, f, "100"); resp.StatusCode != http.StatusOK {
		t.Errorf("upload with the default permissions = %d %+v", resp.StatusCode, e)
	}
}
