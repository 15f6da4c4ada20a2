package agent

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// echoMCP is a minimal MCP server for tests: one tool "echo" that answers
// "echo: <text>". It records every method it was sent.
type echoMCP struct {
	mu      sync.Mutex
	methods []string
	calls   []json.RawMessage // tools/call params
}

func (e *echoMCP) HandleMCP(_ context.Context, msg json.RawMessage) json.RawMessage {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		return nil
	}
	e.mu.Lock()
	e.methods = append(e.methods, m.Method)
	if m.Method == "tools/call" {
		e.calls = append(e.calls, m.Params)
	}
	e.mu.Unlock()
	if len(m.ID) == 0 {
		return nil // a notification
	}
	var result any
	switch m.Method {
	case "initialize":
		result = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]any{"name": "test", "version": "1"}}
	case "tools/list":
		result = map[string]any{"tools": []any{map[string]any{
			"name": "echo", "description": "Echo a text.",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []string{"text"}},
		}}}
	case "tools/call":
		var p struct {
			Arguments struct {
				Text string `json:"text"`
			} `json:"arguments"`
		}
		_ = json.Unmarshal(m.Params, &p)
		result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "echo: " + p.Arguments.Text}}}
	default:
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
		return b
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
	return b
}

func (e *echoMCP) seen() ([]string, []json.RawMessage) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.methods), slices.Clone(e.calls)
}

// TestCLISDKMCPRoundTrip: with an in-process MCP server in Options, the real
// CLI lists its tool as mcp__bridge__echo from the first turn, and a call
// (allowed with --allowed-tools, so no permission request) reaches
// HandleMCP and its answer reaches the model.
func TestCLISDKMCPRoundTrip(t *testing.T) {
	h := &harness{agenttest.NewHarness(t)}
	srv := &echoMCP{}
	opts := h.opts()
	opts.MCPServers = map[string]MCPServer{"bridge": srv}
	opts.AllowedTools = []string{"mcp__bridge__echo"}
	s, rec := h.start(opts)

	agenttest.Send(t, s, `[tool mcp__bridge__echo {"text":"round trip"}]`)
	init := rec.Next(t, "init", func(ev streamjson.Event) bool { _, ok := ev.(streamjson.Init); return ok }).(streamjson.Init)
	if !slices.Contains(init.Tools, "mcp__bridge__echo") {
		t.Errorf("init tools lack mcp__bridge__echo: %v", init.Tools)
	}
	res := agenttest.NextResult(t, rec)
	if res.IsError || !strings.Contains(res.Text, "tool said: echo: round trip") {
		t.Fatalf("result = %+v, want the tool's answer", res)
	}
	for _, ev := range rec.All() {
		if p, ok := ev.(streamjson.PermissionRequest); ok {
			t.Errorf("an allowed bridge tool asked for permission: %+v", p)
		}
		if _, ok := ev.(streamjson.MCPMessage); ok {
			t.Errorf("MCP messages must not reach Events")
		}
	}
	methods, calls := srv.seen()
	for _, m := range []string{"initialize", "notifications/initialized", "tools/list", "tools/call"} {
		if !slices.Contains(methods, m) {
			t.Errorf("the server never got %s (got %v)", m, methods)
		}
	}
	if len(calls) != 1 || !strings.Contains(string(calls[0]), `"name":"echo"`) {
		t.Errorf("tools/call params = %s", calls)
	}
}

// TestCLISDKMCPAsks: without --allowed-tools the CLI asks the host before
// calling a host tool, like any tool.
func TestCLISDKMCPAsks(t *testing.T) {
	h := &harness{agenttest.NewHarness(t)}
	opts := h.opts()
	opts.MCPServers = map[string]MCPServer{"bridge": &echoMCP{}}
	s, rec := h.start(opts)
	agenttest.Send(t, s, `[tool mcp__bridge__echo {"text":"ask first"}]`)
	p := agenttest.NextPermission(t, rec)
	if p.ToolName != "mcp__bridge__echo" {
		t.Fatalf("permission for %q, want mcp__bridge__echo", p.ToolName)
	}
	agenttest.Respond(t, s, p.RequestID, streamjson.Decision{Allow: true})
	if res := agenttest.NextResult(t, rec); !strings.Contains(res.Text, "echo: ask first") {
		t.Fatalf("result = %q", res.Text)
	}
}
