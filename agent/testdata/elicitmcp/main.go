// Command elicitmcp is a tiny stdio MCP server for tests: its tool "ask"
// sends elicitation/create to the client (a form with an enum field
// "env" and a boolean "confirm", or with a free-text field "note" when the
// tool's argument kind is "text") and answers the tool call with what the
// client returned: "elicitation result: action=…, content=…". Every line
// it reads is appended to the file named by ELICIT_LOG, if set.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

type msg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := json.NewEncoder(os.Stdout)
	var logf *os.File
	if p := os.Getenv("ELICIT_LOG"); p != "" {
		logf, _ = os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	}
	reply := func(id json.RawMessage, result any) {
		b, _ := json.Marshal(result)
		_ = out.Encode(msg{JSONRPC: "2.0", ID: id, Result: b})
	}
	var pendingCall json.RawMessage // the tools/call waiting for the elicitation's answer
	for in.Scan() {
		line := in.Bytes()
		if logf != nil {
			fmt.Fprintf(logf, "%s\n", line)
		}
		var m msg
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch {
		case m.Method == "initialize":
			reply(m.ID, map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "elicit", "version": "1"}})
		case m.Method == "tools/list":
			reply(m.ID, map[string]any{"tools": []any{map[string]any{
				"name": "ask", "description": "Ask the user to choose a deployment target.",
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"kind": map[string]any{"type": "string"}}},
			}}})
		case m.Method == "tools/call":
			var p struct {
				Arguments struct {
					Kind string `json:"kind"`
				} `json:"arguments"`
			}
			_ = json.Unmarshal(m.Params, &p)
			schema := map[string]any{"type": "object", "properties": map[string]any{
				"env":     map[string]any{"type": "string", "title": "Environment", "enum": []string{"staging", "production"}},
				"confirm": map[string]any{"type": "boolean", "title": "Run the migrations too"},
			}, "required": []string{"env"}}
			message := "Where should I deploy?"
			if p.Arguments.Kind == "mixed" { // a choice beside typed text: no card shows it
				schema = map[string]any{"type": "object", "properties": map[string]any{
					"env":    map[string]any{"type": "string", "enum": []string{"staging", "production"}},
					"reason": map[string]any{"type": "string", "title": "Why"},
				}}
				message = "Where and why?"
			}
			if p.Arguments.Kind == "text" {
				schema = map[string]any{"type": "object", "properties": map[string]any{
					"note": map[string]any{"type": "string", "title": "Release note"},
				}, "required": []string{"note"}}
				message = "Write the release note."
			}
			pendingCall = m.ID
			params, _ := json.Marshal(map[string]any{"message": message, "requestedSchema": schema})
			_ = out.Encode(msg{JSONRPC: "2.0", ID: json.RawMessage(`"elicit-1"`), Method: "elicitation/create", Params: params})
		case m.Method == "" && string(m.ID) == `"elicit-1"`:
			text := "elicitation result: error " + string(m.Error)
			if m.Error == nil {
				text = "elicitation result: " + string(m.Result)
			}
			reply(pendingCall, map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
		case len(m.ID) > 0 && m.Method != "":
			b, _ := json.Marshal(map[string]any{"code": -32601, "message": "method not found"})
			_ = out.Encode(msg{JSONRPC: "2.0", ID: m.ID, Error: b})
		}
	}
}
