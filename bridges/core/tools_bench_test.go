package core

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// benchPlatform is a Platform that accepts every post.
type benchPlatform struct{}

func (benchPlatform) Limits() bridges.Limits                           { return bridges.Limits{MaxMessageRunes: 4000} }
func (benchPlatform) Run(ctx context.Context, _ bridges.Handler) error { <-ctx.Done(); return nil }
func (benchPlatform) Post(context.Context, bridges.ConversationKey, bridges.Message) (bridges.MessageRef, error) {
	return bridges.MessageRef{ID: "m"}, nil
}

func benchCore(b *testing.B) *Core {
	b.Helper()
	st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "bridge.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return NewCore(CoreOptions{Config: &config.Config{}, Store: st, Pool: nil, Logger: slog.New(slog.DiscardHandler)})
}

// BenchmarkAgentToolCall: the bridge's side of one send_message call of
// the agent: the JSON-RPC tools/call through the MCP server (mcp-go),
// logging and counting, the post to the platform, the JSON-RPC answer.
func BenchmarkAgentToolCall(b *testing.B) {
	c := benchCore(b)
	cv := &conversation{core: c, key: bridges.ConversationKey{Bot: "bot", Channel: "C1", Thread: "T1"}, id: "conv",
		bot: &config.Bot{Name: "bot"}, profile: &config.Agent{Name: "coder"}, platform: benchPlatform{},
		limits: benchPlatform{}.Limits(), budget: &budget{}, log: c.log}
	tools := cv.newAgentTools(b.TempDir())
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
