package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/mcprelay/relay"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// toolServer is a host MCP server for the tests: two tools, each call
// answered with the tool's name, its arguments and the server's
// conversation, and recorded.
type toolServer struct {
	conv string
	mu   sync.Mutex
	seen []string // every message's method (or the raw line when it has none)
}

func (ts *toolServer) HandleMCP(_ context.Context, msg json.RawMessage) json.RawMessage {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	_ = json.Unmarshal(msg, &m)
	ts.mu.Lock()
	ts.seen = append(ts.seen, textOr(m.Method, string(msg)))
	ts.mu.Unlock()
	var result any
	switch m.Method {
	case "initialize":
		result = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]string{"name": "test", "version": "1"}}
	case "tools/list":
		schema := map[string]any{"type": "object"}
		result = map[string]any{"tools": []any{
			map[string]any{"name": "send_file", "inputSchema": schema}, map[string]any{"name": "list_schedules", "inputSchema": schema}}}
	case "tools/call":
		result = map[string]any{"content": []any{map[string]any{"type": "text",
			"text": "called " + m.Params.Name + " " + string(m.Params.Arguments) + " for " + ts.conv}}}
	default:
		if len(m.ID) == 0 {
			return nil
		}
		result = map[string]any{}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
	return b
}

func textOr(s, alt string) string {
	if s != "" {
		return s
	}
	return alt
}

// calls is what the server has seen.
func (ts *toolServer) calls() []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]string(nil), ts.seen...)
}

// toolOpts are acpOpts with the host server srv and the test binary as
// the relay (it imports agent/mcprelay, as the bridge does).
func toolOpts(t *testing.T, bin string, srv MCPServer) Options {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts := acpOpts(t, bin)
	opts.MCPServers = map[string]MCPServer{"bridge": srv}
	opts.MCPRelay = exe
	return opts
}

// wantToolCall sends the mcp script and checks the agent got the tools
// and the call reached srv for its conversation.
func wantToolCall(t *testing.T, s *Session, rec *agenttest.Recorder, srv *toolServer) {
	t.Helper()
	agenttest.Send(t, s, `mcp send_file {"path":"out/report.txt"}`)
	r := agenttest.NextResult(t, rec)
	want := `mcp bridge tools: send_file, list_schedules; call send_file (error false): called send_file {"path":"out/report.txt"} for ` + srv.conv
	if r.Text != want {
		t.Errorf("the agent's tool call: %q\nwant %q\nthe server saw %q", r.Text, want, srv.calls())
	}
}

// TestACPAgentTools: an ACP agent gets the host's MCP servers as stdio
// servers in session/new (the relay to a socket of the session): the
// agent starts the relay, lists the tools and calls one, which reaches the
// session's own server. Garbage written to the socket is answered with a
// JSON-RPC error and never reaches the server; the socket goes when the
// session ends. Without a relay the agent is offered no server.
func TestACPAgentTools(t *testing.T) {
	bin := testkit.BuildFakeACP(t)
	srv := &toolServer{conv: "conversation-1"}
	opts := toolOpts(t, bin, srv)
	s, rec := startACP(t, opts)
	wantToolCall(t, s, rec, srv)
	log, _ := os.ReadFile(opts.Env["FAKEACP_LOG"])
	if !strings.Contains(string(log), `"mcpServers":[{"name":"bridge","command":"`+opts.MCPRelay+`","args":["`+relay.Command+`","`+filepath.Join(opts.StateDir, "acp", "mcp-0.sock")+`"],"env":[]}]`) {
		t.Errorf("session/new did not offer the relay to the session's socket:\n%s", log)
	}

	// A hostile agent writes garbage to the socket itself.
	sock := filepath.Join(opts.StateDir, "acp", "mcp-0.sock")
	before := len(srv.calls())
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatalf("connect to the session's socket: %v", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(agenttest.EventTimeout))
	if _, err := c.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":\n[1,2]\n\x00\x01garbage\n")); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	for i := range 3 {
		line, err := r.ReadBytes('\n')
		var m struct {
			ID    json.RawMessage    `json:"id"`
			Error struct{ Code int } `json:"error"`
		}
		if err != nil || json.Unmarshal(line, &m) != nil || string(m.ID) != "null" || m.Error.Code > -32600 || m.Error.Code < -32700 {
			t.Errorf("answer %d to garbage: %q, %v; want a JSON-RPC error", i, line, err)
		}
	}
	if got := srv.calls(); len(got) != before {
		t.Errorf("garbage reached the server: %q", got[before:])
	}
	wantToolCall(t, s, rec, srv) // the session's tools still work

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	<-s.Done()
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket outlived the session: %v", err)
	}

	opts = toolOpts(t, bin, srv)
	opts.MCPRelay = ""
	s, rec = startACP(t, opts)
	agenttest.Send(t, s, "mcp")
	if r := agenttest.NextResult(t, rec); r.Text != "mcp: no MCP servers offered" {
		t.Errorf("without a relay: %q", r.Text)
	}
}

// TestACPAgentToolsRelative: a relay that is not an absolute path is
// refused (the agent would look it up where it pleases).
func TestACPAgentToolsRelative(t *testing.T) {
	opts := Options{Kind: KindACP, Command: "agent", Workdir: t.TempDir(), MCPRelay: "bridge"}
	if _, err := opts.Normalized(); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
		t.Errorf("Normalized with a relative relay: %v", err)
	}
}
