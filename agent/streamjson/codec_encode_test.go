package streamjson

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestEncodeExactLines pins the exact bytes of every line the host writes.
// The shapes are the ones the captures prove the CLI accepts; the
// permission reply in particular must keep the decision in
// response.response or the turn hangs.
func TestEncodeExactLines(t *testing.T) {
	bashInput := json.RawMessage(`{"command":"touch ran.txt && echo hello","description":"Run the scripted command"}`)
	askInput := json.RawMessage(`{"questions":[{"question":"Which database should we use?","header":"DB","options":[{"label":"Postgres","description":"p"},{"label":"SQLite","description":"s"}],"multiSelect":false}]}`)
	png := []byte{0x89, 'P', 'N', 'G', 0, 1, 2}
	must := func(b []byte, err error) string {
		t.Helper()
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		return string(b)
	}
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"user text", must(EncodeUserMessage(UserMessage{UUID: "u-1", Text: "hello <b> & \"you\"\nbye"})),
			`{"type":"user","message":{"role":"user","content":"hello <b> & \"you\"\nbye"},"parent_tool_use_id":null,"uuid":"u-1"}`},
		{"user empty text", must(EncodeUserMessage(UserMessage{UUID: "u-0"})),
			`{"type":"user","message":{"role":"user","content":""},"parent_tool_use_id":null,"uuid":"u-0"}`},
		{"user with image", must(EncodeUserMessage(UserMessage{UUID: "u-2", Text: "what is this?", Images: []Image{{MediaType: "image/png", Data: png}}})),
			`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"what is this?"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORwABAg=="}}]},"parent_tool_use_id":null,"uuid":"u-2"}`},
		{"user image only", must(EncodeUserMessage(UserMessage{UUID: "u-3", Images: []Image{{MediaType: "image/jpeg", Data: []byte("x")}, {MediaType: "image/gif", Data: []byte("y")}}})),
			`{"type":"user","message":{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"eA=="}},{"type":"image","source":{"type":"base64","media_type":"image/gif","data":"eQ=="}}]},"parent_tool_use_id":null,"uuid":"u-3"}`},
		{"allow original input", must(EncodePermission("r-1", bashInput, Decision{Allow: true})),
			`{"type":"control_response","response":{"subtype":"success","request_id":"r-1","response":{"behavior":"allow","updatedInput":{"command":"touch ran.txt && echo hello","description":"Run the scripted command"}}}}`},
		{"allow no input at all", must(EncodePermission("r-1b", nil, Decision{Allow: true})),
			`{"type":"control_response","response":{"subtype":"success","request_id":"r-1b","response":{"behavior":"allow","updatedInput":{}}}}`},
		{"allow indented input is compacted", must(EncodePermission("r-1c", json.RawMessage("{\n  \"plan\": \"x\"\n}"), Decision{Allow: true})),
			`{"type":"control_response","response":{"subtype":"success","request_id":"r-1c","response":{"behavior":"allow","updatedInput":{"plan":"x"}}}}`},
		{"allow with answers", must(EncodePermission("r-2", askInput, Decision{Allow: true,
			UpdatedInput: json.RawMessage(`{"questions":[],"answers":{"Which database should we use?":"Postgres"}}`)})),
			`{"type":"control_response","response":{"subtype":"success","request_id":"r-2","response":{"behavior":"allow","updatedInput":{"questions":[],"answers":{"Which database should we use?":"Postgres"}}}}}`},
		{"allow always", must(EncodePermission("r-3", bashInput, Decision{Allow: true,
			UpdatedPermissions: []json.RawMessage{json.RawMessage(`{"type":"setMode","mode":"acceptEdits","destination":"session"}`)}})),
			`{"type":"control_response","response":{"subtype":"success","request_id":"r-3","response":{"behavior":"allow","updatedInput":{"command":"touch ran.txt && echo hello","description":"Run the scripted command"},"updatedPermissions":[{"type":"setMode","mode":"acceptEdits","destination":"session"}]}}}`},
		{"deny with message", must(EncodePermission("r-4", bashInput, Decision{Message: "Denied by @alice"})),
			`{"type":"control_response","response":{"subtype":"success","request_id":"r-4","response":{"behavior":"deny","message":"Denied by @alice"}}}`},
		{"deny without message gets one", must(EncodePermission("r-5", bashInput, Decision{})),
			`{"type":"control_response","response":{"subtype":"success","request_id":"r-5","response":{"behavior":"deny","message":"Permission denied by the host."}}}`},
		{"deny with interrupt", must(EncodePermission("r-6", bashInput, Decision{Message: "stop", Interrupt: true})),
			`{"type":"control_response","response":{"subtype":"success","request_id":"r-6","response":{"behavior":"deny","message":"stop","interrupt":true}}}`},
		{"control error", must(EncodeControlError("r-7", "host blew up")),
			`{"type":"control_response","response":{"subtype":"error","request_id":"r-7","error":"host blew up"}}`},
		{"hook continue", must(EncodeControlSuccess("r-8", wireEmpty{})),
			`{"type":"control_response","response":{"subtype":"success","request_id":"r-8","response":{}}}`},
		{"interrupt", must(EncodeInterrupt("host-1")),
			`{"type":"control_request","request_id":"host-1","request":{"subtype":"interrupt"}}`},
		{"set model", must(EncodeSetModel("host-2", "claude-sonnet-5-5")),
			`{"type":"control_request","request_id":"host-2","request":{"subtype":"set_model","model":"claude-sonnet-5-5"}}`},
		{"set permission mode", must(EncodeSetPermissionMode("host-3", "acceptEdits")),
			`{"type":"control_request","request_id":"host-3","request":{"subtype":"set_permission_mode","mode":"acceptEdits"}}`},
		{"initialize", must(EncodeInitialize("host-4", "")),
			`{"type":"control_request","request_id":"host-4","request":{"subtype":"initialize"}}`},
		{"initialize with prompt", must(EncodeInitialize("host-5", "FAKE-APPEND-MARKER")),
			`{"type":"control_request","request_id":"host-5","request":{"subtype":"initialize","appendSystemPrompt":"FAKE-APPEND-MARKER"}}`},
		{"initialize with SDK MCP servers", must(EncodeInitialize("host-7", "", "bridge")),
			`{"type":"control_request","request_id":"host-7","request":{"subtype":"initialize","sdkMcpServers":["bridge"]}}`},
		{"mcp response", must(EncodeMCPResponse("r-9", json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{}}`))),
			`{"type":"control_response","response":{"subtype":"success","request_id":"r-9","response":{"mcp_response":{"jsonrpc":"2.0","id":1,"result":{}}}}}`},
		{"mcp notification answered with null", must(EncodeMCPResponse("r-10", nil)),
			`{"type":"control_response","response":{"subtype":"success","request_id":"r-10","response":{"mcp_response":null}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.HasSuffix(tt.got, "\n") || strings.Count(tt.got, "\n") != 1 {
				t.Fatalf("not exactly one line: %q", tt.got)
			}
			if got := strings.TrimSuffix(tt.got, "\n"); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestEncodePermissionMatchesCapture checks the allow reply byte-for-byte
// against the one the real CLI accepted in the capture.
func TestEncodePermissionMatchesCapture(t *testing.T) {
	req := decodeLine(exampleLine(t, "cli->host", "control_request", "can_use_tool"))[0].(PermissionRequest)
	got, err := EncodePermission(req.RequestID, req.Input, Decision{Allow: true})
	if err != nil {
		t.Fatal(err)
	}
	want := string(exampleLine(t, "host->cli", "control_response", "success"))
	if strings.TrimSuffix(string(got), "\n") != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestEncodeRejectsBadInput(t *testing.T) {
	tests := []struct {
		name string
		err  func() error
	}{
		{"user without uuid", func() error { _, err := EncodeUserMessage(UserMessage{Text: "x"}); return err }},
		{"image without data", func() error {
			_, err := EncodeUserMessage(UserMessage{UUID: "u", Images: []Image{{MediaType: "image/png"}}})
			return err
		}},
		{"invalid updated input", func() error {
			_, err := EncodePermission("r", nil, Decision{Allow: true, UpdatedInput: json.RawMessage(`{"a":`)})
			return err
		}},
		{"invalid updated permission", func() error {
			_, err := EncodePermission("r", nil, Decision{Allow: true, UpdatedPermissions: []json.RawMessage{json.RawMessage(`nope`)}})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err() == nil {
				t.Error("want an error, got nil")
			}
		})
	}
}

// TestEncodeElicitationResponse: the answers re-encode to exactly the
// shapes of the capture (testdata/transcripts/transcript-elicitation.jsonl)
// that the pinned CLI passed on to the MCP server; unknown actions fail.
func TestEncodeElicitationResponse(t *testing.T) {
	const id = "714e00ca-fe18-4db4-a691-14bb157e8864"
	cases := []struct {
		action  string
		content map[string]any
		want    string
	}{
		{ElicitAccept, map[string]any{"env": "staging", "confirm": true},
			`{"type":"control_response","response":{"subtype":"success","request_id":"` + id + `","response":{"action":"accept","content":{"confirm":true,"env":"staging"}}}}`},
		{ElicitAccept, nil, `{"type":"control_response","response":{"subtype":"success","request_id":"` + id + `","response":{"action":"accept","content":{}}}}`},
		{ElicitDecline, map[string]any{"ignored": 1}, `{"type":"control_response","response":{"subtype":"success","request_id":"` + id + `","response":{"action":"decline"}}}`},
		{ElicitCancel, nil, `{"type":"control_response","response":{"subtype":"success","request_id":"` + id + `","response":{"action":"cancel"}}}`},
	}
	for _, tc := range cases {
		line, err := EncodeElicitationResponse(id, tc.action, tc.content)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(line)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.action, got, tc.want)
		}
	}
	if _, err := EncodeElicitationResponse(id, "maybe", nil); err == nil {
		t.Error("an unknown action was encoded")
	}
}

// TestDecodeElicitation: the captured request decodes with every field.
func TestDecodeElicitation(t *testing.T) {
	line := `{"type":"control_request","request_id":"r1","request":{"subtype":"elicitation","mcp_server_name":"elicit","message":"Where should I deploy?","mode":"form","requested_schema":{"type":"object","properties":{"env":{"type":"string","enum":["staging","production"]}}},"property_order":["env"],"title":"Deploy","display_name":"Deployer","description":"d"}}`
	evs := decodeLine([]byte(line))
	e, ok := evs[0].(Elicitation)
	if len(evs) != 1 || !ok {
		t.Fatalf("decoded %#v", evs)
	}
	if e.RequestID != "r1" || e.Server != "elicit" || e.Mode != "form" || e.Message != "Where should I deploy?" ||
		!strings.Contains(string(e.Schema), `"enum":["staging","production"]`) || len(e.PropertyOrder) != 1 || e.PropertyOrder[0] != "env" ||
		e.Title != "Deploy" || e.DisplayName != "Deployer" || e.Description != "d" {
		t.Errorf("decoded %+v", e)
	}
}
