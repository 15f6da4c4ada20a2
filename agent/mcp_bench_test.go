package agent

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/agent/agenttest"
)

// BenchmarkToolRoundTrip: one turn on a live process in which the model
// calls a host (SDK MCP) tool: Send → tool_use → mcp_message tools/call →
// HandleMCP → answer → the model's final text → Result. Compare with
// BenchmarkFollowUpLive (a turn without a tool): the difference is the
// tool round trip plus the second model request a tool call needs.
func BenchmarkToolRoundTrip(b *testing.B) {
	h := &harness{agenttest.NewHarness(b)}
	opts := h.opts()
	opts.MCPServers = map[string]MCPServer{"bridge": &echoMCP{}}
	opts.AllowedTools = []string{"mcp__bridge__echo"}
	s, err := Start(context.Background(), opts, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	defer agenttest.BenchClose(b, s)
	agenttest.BenchSend(b, s, "warm up")
	agenttest.BenchResult(b, s.Events())
	i := 0
	for b.Loop() {
		i++
		agenttest.BenchSend(b, s, fmt.Sprintf(`[tool mcp__bridge__echo {"text":"call %d"}]`, i))
		if r := agenttest.BenchResult(b, s.Events()); r.IsError || !strings.Contains(r.Text, fmt.Sprintf("echo: call %d", i)) {
			b.Fatalf("result %+v", r)
		}
	}
}
