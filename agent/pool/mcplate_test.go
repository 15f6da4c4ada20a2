package pool

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent"
)

// nameMCP answers every message with its own name.
type nameMCP string

func (e nameMCP) HandleMCP(context.Context, json.RawMessage) json.RawMessage {
	return json.RawMessage(`"` + string(e) + `"`)
}

// TestSpareMCPServers: a spare's MCP servers do not stop a conversation with
// its own servers of the same names from taking it; before the hand-over
// the profile's server answers start-up messages and a tool call waits for
// the conversation's server, which serves everything after it.
func TestSpareMCPServers(t *testing.T) {
	template := agent.Options{Command: "claude", Workdir: "/w", MCPServers: map[string]agent.MCPServer{"bridge": nameMCP("profile")}}
	conv := template
	conv.MCPServers = map[string]agent.MCPServer{"bridge": nameMCP("conversation")}
	conv.SessionID = "0b7c7a8e-3d0e-4a55-9d6f-2a4c1f0e9b11"
	if !sameSpawn(template, conv) {
		t.Fatal("a conversation with its own server of the same name cannot take the spare")
	}
	other := conv
	other.MCPServers = map[string]agent.MCPServer{"elsewhere": nameMCP("x")}
	if sameSpawn(template, other) {
		t.Error("servers of other names took the spare")
	}

	spare := lateServers(template.MCPServers)
	ctx := context.Background()
	if got := string(spare["bridge"].HandleMCP(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))); got != `"profile"` {
		t.Errorf("tools/list before the hand-over answered %s", got)
	}
	call := json.RawMessage(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"send_message"}}`)
	answered := make(chan string, 1)
	go func() { answered <- string(spare["bridge"].HandleMCP(ctx, call)) }()
	select {
	case got := <-answered:
		t.Fatalf("a tool call was answered before the hand-over: %s", got)
	case <-time.After(50 * time.Millisecond):
	}
	bindServers(spare, conv.MCPServers)
	select {
	case got := <-answered:
		if got != `"conversation"` {
			t.Errorf("the waiting tool call went to %s", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting tool call was never answered")
	}
	if got := string(spare["bridge"].HandleMCP(ctx, json.RawMessage(`{"method":"tools/list"}`))); got != `"conversation"` {
		t.Errorf("after the hand-over tools/list went to %s", got)
	}
}
