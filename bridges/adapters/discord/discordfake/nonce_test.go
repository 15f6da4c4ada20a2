package discordfake

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
)

// createRaw posts a create-message body to ch and returns the status and
// the message id (or error code) of the answer.
func createRaw(t *testing.T, f *Fake, ch string, body map[string]any) (int, string) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", f.URL()+"channels/"+ch+"/messages", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bot "+f.Token())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		ID    string          `json:"id"`
		Code  int             `json:"code"`
		Nonce json.RawMessage `json:"nonce"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if out.ID == "" {
		b, _ := json.Marshal(out.Code)
		return resp.StatusCode, string(b)
	}
	return resp.StatusCode, out.ID
}

// enforce_nonce as Discord documents it: a second create with the same
// nonce by the same author in the same channel returns the first message;
// without enforce_nonce, or in another channel, a new one is created; a
// nonce over 25 characters is 50035.
func TestEnforceNonce(t *testing.T) {
	f := New(t)
	f.AddChannel("10", "1", "", ChannelGuildText, "a")
	f.AddChannel("11", "1", "", ChannelGuildText, "b")
	_, first := createRaw(t, f, "10", map[string]any{"content": "x", "nonce": "n1", "enforce_nonce": true})
	if st, again := createRaw(t, f, "10", map[string]any{"content": "x", "nonce": "n1", "enforce_nonce": true}); st != 200 || again != first {
		t.Errorf("same nonce: %d %s, want 200 %s", st, again, first)
	}
	if _, other := createRaw(t, f, "11", map[string]any{"content": "x", "nonce": "n1", "enforce_nonce": true}); other == first {
		t.Error("same nonce in another channel returned the first message")
	}
	if _, plain := createRaw(t, f, "10", map[string]any{"content": "x", "nonce": "n1"}); plain == first {
		t.Error("nonce without enforce_nonce returned the first message")
	}
	if _, num := createRaw(t, f, "10", map[string]any{"content": "x", "nonce": 42, "enforce_nonce": true}); num == first {
		t.Error("integer nonce matched a string one")
	}
	if st, code := createRaw(t, f, "10", map[string]any{"content": "x", "nonce": "12345678901234567890123456", "enforce_nonce": true}); st != 400 || code != "50035" {
		t.Errorf("26-character nonce: %d %s, want 400 50035", st, code)
	}
	if n := len(f.Messages("10")); n != 3 {
		t.Errorf("%d messages in channel 10, want 3", n)
	}
}
