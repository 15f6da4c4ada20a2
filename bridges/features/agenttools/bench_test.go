package agenttools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/toolconv"
	"github.com/agentbridge/agentbridge/bridges/features/agenttools"
	"github.com/agentbridge/agentbridge/config/profile"
)

// benchConv is a ToolConversation that accepts every post.
type benchConv struct{ workdir string }

func (benchConv) Key() bridges.ConversationKey {
	return bridges.ConversationKey{Bot: "bot", Channel: "C1", Thread: "T1"}
}
func (benchConv) Log() *slog.Logger                             { return slog.New(slog.DiscardHandler) }
func (c benchConv) Workdir() string                             { return c.workdir }
func (benchConv) Hidden() []string                              { return nil }
func (benchConv) UploadLimit() (int64, bool)                    { return 0, false }
func (benchConv) PostText(context.Context, string) (int, error) { return 1, nil }
func (benchConv) Upload(context.Context, bridges.Upload) error  { return nil }
func (benchConv) ToolCalled(string, string)                     {}
func (benchConv) ConvID() string                                { return "conv-1" }
func (benchConv) Profile() *profile.Agent                       { return &profile.Agent{Name: "coder"} }
func (benchConv) Owner() string                                 { return "" }
func (benchConv) AskApproval(context.Context, toolconv.Approval) error {
	return toolconv.ErrNoWorker
}

// BenchmarkAgentToolCall: the tool server's side of one send_message call
// of the agent: the JSON-RPC tools/call through the MCP server (mcp-go),
// logging and counting, the JSON-RPC answer (the core's post is faked).
func BenchmarkAgentToolCall(b *testing.B) {
	tools := agenttools.New().Server(benchConv{workdir: b.TempDir()})
	ctx := context.Background()
	for _, m := range []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","version":"2.1.330"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	} {
		tools.HandleMCP(ctx, json.RawMessage(m))
	}
	i := 0
	for b.Loop() {
		i++
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"send_message","arguments":{"text":"build %d finished"}}}`, i, i)
		if resp := tools.HandleMCP(ctx, json.RawMessage(msg)); !strings.Contains(string(resp), "Posted in the conversation.") {
			b.Fatalf("answer %s", resp)
		}
	}
}
