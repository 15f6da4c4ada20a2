package acp

import (
	"encoding/json"
	"errors"
	"strings"

	"testing"

	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// harness is a client with its events and written lines recorded.
type harness struct {
	c      *Client
	events []streamjson.Event
}

func newHarness(t *testing.T, cfg Config) *harness {
	h := &harness{}
	cfg.Emit = func(ev streamjson.Event) { h.events = append(h.events, ev) }
	h.c = New(cfg)
	h.c.Start()
	return h
}

// lines returns the written lines decoded.
func (h *harness) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range h.c.Take() {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("client wrote %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// ready takes the client through initialize and session/new.
func (h *harness) ready(t *testing.T) {
	t.Helper()
	h.lines(t)
	h.c.Handle([]byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{}}}`))
	h.lines(t)
	h.c.Handle([]byte(`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}`))
	select {
	case <-h.c.Ready():
	default:
		t.Fatal("not ready after session/new")
	}
}

// TestToolOf: shell calls become Bash with the command line (an argv's
// shell script, or the argv joined), reads and edits Read and Edit with
// the path; other kinds keep their name.
func TestToolOf(t *testing.T) {
	for _, tc := range []struct {
		kind, raw, path string
		name, input     string
	}{
		{"execute", `{"command":"git status"}`, "", "Bash", `{"command":"git status","description":"t"}`},
		{"execute", `{"command":["bash","-lc","rm -rf /"]}`, "", "Bash", `{"command":"rm -rf /","description":"t"}`},
		{"execute", `{"command":["ls","-la"]}`, "", "Bash", `{"command":"ls -la","description":"t"}`},
		{"", `{"command":"echo x"}`, "", "Bash", `{"command":"echo x","description":"t"}`},
		{"execute", `{}`, "", "Bash", `{"command":"t","description":"t"}`},
		{"read", `{"path":"/w/a.go"}`, "", "Read", `{"file_path":"/w/a.go"}`},
		{"edit", `{}`, "/w/b.go", "Edit", `{"file_path":"/w/b.go"}`},
		{"fetch", `{"url":"https://x.test"}`, "", "WebFetch", `{"url":"https://x.test"}`},
		{"search", `{"query":"q"}`, "", "Search", `{"description":"t","query":"q"}`},
		{"", ``, "", "Other", `{"description":"t"}`},
	} {
		name, input := toolOf(tc.kind, "t", json.RawMessage(tc.raw), tc.path)
		if name != tc.name || string(input) != tc.input {
			t.Errorf("toolOf(%q, %s, %q) = %s %s, want %s %s", tc.kind, tc.raw, tc.path, name, input, tc.name, tc.input)
		}
	}
}

// TestRespondOptions: each decision picks the agent's matching option,
// falling back to the other of its kind, else "cancelled".
func TestRespondOptions(t *testing.T) {
	always := []json.RawMessage{json.RawMessage(`{}`)}
	for _, tc := range []struct {
		options string
		d       streamjson.Decision
		want    string
	}{
		{`[{"optionId":"a","kind":"allow_once"},{"optionId":"b","kind":"allow_always"},{"optionId":"r","kind":"reject_once"}]`, streamjson.Decision{Allow: true}, `"optionId":"a"`},
		{`[{"optionId":"a","kind":"allow_once"},{"optionId":"b","kind":"allow_always"},{"optionId":"r","kind":"reject_once"}]`, streamjson.Decision{Allow: true, UpdatedPermissions: always}, `"optionId":"b"`},
		{`[{"optionId":"b","kind":"allow_always"}]`, streamjson.Decision{Allow: true}, `"optionId":"b"`},
		{`[{"optionId":"a","kind":"allow_once"},{"optionId":"r","kind":"reject_once"}]`, streamjson.Decision{Message: "no"}, `"optionId":"r"`},
		{`[{"optionId":"a","kind":"allow_once"},{"optionId":"ra","kind":"reject_always"}]`, streamjson.Decision{Message: "no"}, `"optionId":"ra"`},
		{`[{"optionId":"a","kind":"allow_once"}]`, streamjson.Decision{Message: "no"}, `"outcome":"cancelled"`},
	} {
		h := newHarness(t, Config{SessionID: "host"})
		h.ready(t)
		if err := h.c.Send(streamjson.UserMessage{UUID: "u1", Text: "go"}); err != nil {
			t.Fatal(err)
		}
		h.lines(t)
		h.c.Handle([]byte(`{"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"c1","kind":"execute","rawInput":{"command":"ls"}},"options":` + tc.options + `}}`))
		if err := h.c.Respond("acp-p1", tc.d); err != nil {
			t.Fatal(err)
		}
		out := h.c.Take()
		if len(out) != 1 || !strings.Contains(string(out[0]), tc.want) || !strings.Contains(string(out[0]), `"id":"p1"`) {
			t.Errorf("options %s decision %+v: wrote %q, want …%s…", tc.options, tc.d, out, tc.want)
		}
		if err := h.c.Respond("acp-p1", tc.d); !errors.Is(err, ErrNotPending) {
			t.Errorf("second answer: %v", err)
		}
	}
}

// TestSetupFailure: an agent that refuses session/new (e.g. it needs a
// login) is said once; every message gets an error result instead of
// waiting forever.
func TestSetupFailure(t *testing.T) {
	h := newHarness(t, Config{SessionID: "host"})
	if err := h.c.Send(streamjson.UserMessage{UUID: "u1", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	h.c.Handle([]byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{}}}`))
	h.c.Handle([]byte(`{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Authentication required"}}`))
	if h.c.Err() == nil {
		t.Fatal("no set-up error")
	}
	if err := h.c.Send(streamjson.UserMessage{UUID: "u2", Text: "again"}); err != nil {
		t.Fatal(err)
	}
	var notices, results int
	completed := map[string]bool{}
	for _, ev := range h.events {
		switch e := ev.(type) {
		case streamjson.Notice:
			notices++
			if e.Level != "error" || !strings.Contains(e.Text, "Authentication required") {
				t.Errorf("notice %+v", e)
			}
		case streamjson.Result:
			results++
			if !e.IsError || !strings.Contains(e.Text, "Authentication required") {
				t.Errorf("result %+v", e)
			}
		case streamjson.Lifecycle:
			if e.State == streamjson.LifecycleCompleted {
				completed[e.UUID] = true
			}
		}
	}
	if notices != 1 || results != 2 || !completed["u1"] || !completed["u2"] {
		t.Errorf("notices %d results %d completed %v", notices, results, completed)
	}
}

// TestWrongProtocolVersion: an agent of another protocol version is
// refused with a clear error.
func TestWrongProtocolVersion(t *testing.T) {
	h := newHarness(t, Config{SessionID: "host"})
	h.c.Handle([]byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":2,"agentCapabilities":{}}}`))
	if err := h.c.Err(); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Errorf("Err = %v", err)
	}
}

// TestAlwaysSuggestion: the card's Always grants exactly one command line
// or one file, never a whole tool.
func TestAlwaysSuggestion(t *testing.T) {
	for _, tc := range []struct {
		name, input, want string
	}{
		{"Bash", `{"command":"git status"}`, `"ruleContent":"git status","toolName":"Bash"`},
		{"Read", `{"file_path":"/w/a.go"}`, `"ruleContent":"/w/a.go","toolName":"Read"`},
		{"Read", `{"file_path":"/w/*.go"}`, ""},
		{"Bash", `{"command":" "}`, ""},
		{"Other", `{"description":"x"}`, ""},
		{"WebFetch", `{"url":"https://x.test"}`, ""},
	} {
		got := alwaysSuggestion(tc.name, json.RawMessage(tc.input))
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s %s: suggestion %s, want none", tc.name, tc.input, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(string(got[0]), tc.want)):
			t.Errorf("%s %s: suggestion %s, want …%s…", tc.name, tc.input, got, tc.want)
		}
	}
}

// TestAuthenticate: an agent that answers session/new "authentication
// required" is authenticated with its env_var method whose variable the
// agent has, then asked again; without such a variable the set-up fails
// naming what the agent offers.
func TestAuthenticate(t *testing.T) {
	init := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{},"authMethods":[` +
		`{"id":"chatgpt","name":"Login with ChatGPT"},` +
		`{"type":"env_var","id":"codex-api-key","name":"Use CODEX_API_KEY","vars":[{"name":"CODEX_API_KEY"}]},` +
		`{"type":"env_var","id":"openai-api-key","name":"Use OPENAI_API_KEY","vars":[{"name":"OPENAI_API_KEY"}]}]}}`
	authRequired := `{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"Authentication required"}}`

	h := newHarness(t, Config{SessionID: "host", EnvVars: []string{"PATH", "OPENAI_API_KEY"}})
	h.lines(t)
	h.c.Handle([]byte(init))
	h.lines(t)
	h.c.Handle([]byte(authRequired))
	out := h.lines(t)
	if len(out) != 1 || out[0]["method"] != "authenticate" || out[0]["params"].(map[string]any)["methodId"] != "openai-api-key" {
		t.Fatalf("after auth required: %v", out)
	}
	h.c.Handle([]byte(`{"jsonrpc":"2.0","id":3,"result":{}}`))
	if out := h.lines(t); len(out) != 1 || out[0]["method"] != "session/new" {
		t.Fatalf("after authenticate: %v", out)
	}
	h.c.Handle([]byte(`{"jsonrpc":"2.0","id":4,"result":{"sessionId":"s1"}}`))
	if h.c.Err() != nil || h.c.AgentSessionID() != "s1" {
		t.Errorf("err %v session %q", h.c.Err(), h.c.AgentSessionID())
	}

	h = newHarness(t, Config{SessionID: "host", EnvVars: []string{"PATH"}})
	h.c.Handle([]byte(init))
	h.c.Handle([]byte(authRequired))
	if err := h.c.Err(); err == nil || !strings.Contains(err.Error(), "Use OPENAI_API_KEY (env OPENAI_API_KEY)") {
		t.Errorf("without a key: %v", err)
	}
}

// TestAgentEndsTurnCancelled: a turn the agent ends "cancelled" without
// the host's Cancel (codex-acp after a denied command) is not a failure;
// one the host cancelled is.
func TestAgentEndsTurnCancelled(t *testing.T) {
	for _, hostCancel := range []bool{false, true} {
		h := newHarness(t, Config{SessionID: "host"})
		h.ready(t)
		if err := h.c.Send(streamjson.UserMessage{UUID: "u1", Text: "go"}); err != nil {
			t.Fatal(err)
		}
		if hostCancel {
			h.c.Cancel()
		}
		h.c.Handle([]byte(`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"cancelled"}}`))
		var res streamjson.Result
		for _, ev := range h.events {
			if r, ok := ev.(streamjson.Result); ok {
				res = r
			}
		}
		if res.IsError != hostCancel || (!hostCancel && res.Text != "(The agent ended the turn.)") {
			t.Errorf("host cancel %v: result %+v", hostCancel, res)
		}
	}
}

// TestArgumentsInContent: a call announced without rawInput whose content
// is one JSON object (Gemini CLI's MCP tools, in the permission request
// too) carries those arguments, so the card shows them; a finished call's
// content is its output, never its arguments.
func TestArgumentsInContent(t *testing.T) {
	h := newHarness(t, Config{SessionID: "host"})
	h.ready(t)
	if err := h.c.Send(streamjson.UserMessage{UUID: "u1", Text: "go"}); err != nil {
		t.Fatal(err)
	}
	h.lines(t)
	h.c.Handle([]byte(`{"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"s1","options":[{"optionId":"proceed_once","name":"Allow","kind":"allow_once"},{"optionId":"cancel","name":"Reject","kind":"reject_once"}],` +
		`"toolCall":{"toolCallId":"mcp_1","status":"pending","title":"send_file (bridge MCP Server)","content":[{"type":"content","content":{"type":"text","text":"{\"comment\":\"c\",\"path\":\"out/r.txt\"}"}}],"locations":[],"kind":"other"}}}`))
	h.c.Handle([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"done_1","status":"completed","title":"t","kind":"other","content":[{"type":"content","content":{"type":"text","text":"{\"output\":\"o\"}"}}]}}}`))
	var perm *streamjson.PermissionRequest
	var done *streamjson.ToolUse
	for _, ev := range h.events {
		switch e := ev.(type) {
		case streamjson.PermissionRequest:
			perm = &e
		case streamjson.ToolUse:
			if e.ID == "done_1" {
				done = &e
			}
		}
	}
	if perm == nil || perm.ToolName != "Other" || string(perm.Input) != `{"comment":"c","description":"send_file (bridge MCP Server)","path":"out/r.txt"}` {
		t.Errorf("permission request = %+v", perm)
	}
	if done == nil || string(done.Input) != `{"description":"t"}` {
		t.Errorf("finished call's input = %+v, want its title only", done)
	}
}
