package discordfake

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The fake enforces the Components V2 rules with 50035 Invalid Form Body:
// no content or embeds with the flag, at most 40 components and 4,000
// characters of text, sections and containers well formed, the flag kept
// by edits; a V2 message's buttons (rows and section accessories) can be
// clicked and its text is read from its text displays.
func TestComponentsV2Rules(t *testing.T) {
	t.Parallel()
	f := New(t)
	f.SendMessage("c1", "g1", "u1", "hello", false)
	text := func(s string) map[string]any { return map[string]any{"type": 10, "content": s} }
	button := func(id string) map[string]any {
		return map[string]any{"type": 2, "style": 1, "label": "L", "custom_id": id}
	}
	section := func(s, id string) map[string]any {
		return map[string]any{"type": 9, "components": []any{text(s)}, "accessory": button(id)}
	}
	container := func(cs ...any) map[string]any { return map[string]any{"type": 17, "components": cs} }
	v2 := func(cs ...any) map[string]any { return map[string]any{"flags": FlagComponentsV2, "components": cs} }
	many := func(n int) []any {
		var out []any
		for range n {
			out = append(out, text("x"))
		}
		return out
	}
	withContent := v2(container(text("hi")))
	withContent["content"] = "also content"
	withEmbed := v2(container(text("hi")))
	withEmbed["embeds"] = []any{map[string]any{"title": "x"}}
	tests := []struct {
		name string
		body map[string]any
		code int // 0 = accepted
	}{
		{"card", v2(container(text("**Bash** wants to run"), section("Use the long option", "c:1:a"), buttonRow("c:1:b", "c:1:c"))), 0},
		{"content and flag", withContent, codeInvalidFormBody},
		{"embeds and flag", withEmbed, codeInvalidFormBody},
		{"40 components", v2(container(many(39)...)), 0},
		{"41 components", v2(container(many(40)...)), codeInvalidFormBody},
		{"4,000 characters", v2(container(text(strings.Repeat("é", 2000)), text(strings.Repeat("é", 2000)))), 0},
		{"4,001 characters", v2(container(text(strings.Repeat("é", 2000)), text(strings.Repeat("é", 2001)))), codeInvalidFormBody},
		{"section without accessory", v2(map[string]any{"type": 9, "components": []any{text("x")}}), codeInvalidFormBody},
		{"nested container", v2(container(container(text("x")))), codeInvalidFormBody},
		{"V2 components without the flag", map[string]any{"components": []any{container(text("x"))}}, codeInvalidFormBody},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, e := do(t, f, "POST", "/channels/c1/messages", tc.body)
			if (tc.code == 0) != (resp.StatusCode == 200) || e.Code != tc.code {
				t.Errorf("got %d code %d (%s), want code %d", resp.StatusCode, e.Code, e.Message, tc.code)
			}
		})
	}

	// A card: its text and buttons as the bot sees them, clickable.
	resp, err := createMessage(f, "/channels/c1/messages", v2(container(text("Pick one"), section("The long option", "c:9:long"), buttonRow("c:9:no"))))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := f.Message(resp.ID)
	if !m.V2 || m.Content != "" || m.Text != "Pick one\nThe long option" || len(m.Buttons()) != 2 {
		t.Fatalf("V2 message = %+v", m)
	}
	if id := f.Click("c1", m.ID, "u1", "c:9:long"); id == "" {
		t.Error("a section's button cannot be clicked")
	}
	edit := func(body map[string]any) int {
		t.Helper()
		r, e := do(t, f, "PATCH", "/channels/c1/messages/"+m.ID, body)
		if r.StatusCode != 200 && e.Code == 0 {
			t.Fatalf("edit: status %d", r.StatusCode)
		}
		return e.Code
	}
	if c := edit(map[string]any{"content": "decided"}); c != codeInvalidFormBody {
		t.Errorf("content on a V2 message by edit: code %d", c)
	}
	if c := edit(map[string]any{"flags": 0, "components": []any{}}); c != codeInvalidFormBody {
		t.Errorf("flag removed by edit: code %d", c)
	}
	if c := edit(map[string]any{"components": []any{container(many(41)...)}}); c != codeInvalidFormBody {
		t.Errorf("41 components by edit: code %d", c)
	}
	if c := edit(v2(container(text("✅ Allowed")))); c != 0 {
		t.Errorf("a V2 edit: code %d", c)
	}
	if m, _ := f.Message(m.ID); !m.V2 || m.Text != "✅ Allowed" || len(m.Buttons()) != 0 {
		t.Errorf("after the edit: %+v", m)
	}
}

// createMessage creates a message and returns it as the fake answered.
func createMessage(f *Fake, route string, body any) (wireMessage, error) {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", strings.TrimSuffix(f.URL(), "/")+route, strings.NewReader(string(b)))
	req.Header.Set("Authorization", "Bot "+f.Token())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return wireMessage{}, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m wireMessage
	err = json.Unmarshal(raw, &m)
	return m, err
}
