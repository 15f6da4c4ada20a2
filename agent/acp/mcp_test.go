package acp

import (
	"encoding/json"
	"testing"
)

// TestMCPServersOffered: the configured stdio servers go in the
// mcpServers of session/new and of session/load as ACP's McpServerStdio
// (name, command, args, env as name/value pairs); none is an empty list.
func TestMCPServersOffered(t *testing.T) {
	servers := []StdioServer{{Name: "bridge", Command: "/usr/bin/bridge", Args: []string{"__mcp-relay", "/s/acp/mcp-0.sock"}}}
	want := `[{"args":["__mcp-relay","/s/acp/mcp-0.sock"],"command":"/usr/bin/bridge","env":[],"name":"bridge"}]` // keys sorted (decoded and encoded again)
	for _, tc := range []struct {
		cfg    Config
		method string
		want   string
	}{
		{Config{CWD: "/w", MCPServers: servers}, "session/new", want},
		{Config{CWD: "/w", MCPServers: servers, Resume: true, LoadID: "old"}, "session/load", want},
		{Config{CWD: "/w"}, "session/new", `[]`},
	} {
		h := newHarness(t, tc.cfg)
		h.lines(t)
		h.c.Handle([]byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}}`))
		lines := h.lines(t)
		if len(lines) != 1 || lines[0]["method"] != tc.method {
			t.Fatalf("after initialize: %v, want %s", lines, tc.method)
		}
		got, _ := json.Marshal(lines[0]["params"].(map[string]any)["mcpServers"])
		if string(got) != tc.want {
			t.Errorf("%s mcpServers = %s, want %s", tc.method, got, tc.want)
		}
	}
}
