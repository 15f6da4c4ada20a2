package agent

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/agent/agenttest"
	"github.com/agentbridge/agentbridge/agent/streamjson"
)

// buildElicitMCP builds testdata/elicitmcp (a stdio MCP server whose tool
// "ask" sends elicitation/create) and returns the --mcp-config value that
// declares it as server "elicit", and the file it logs its input to.
func buildElicitMCP(t *testing.T) (mcpConfig, logPath string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "elicitmcp")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/elicitmcp").CombinedOutput(); err != nil {
		t.Fatalf("build elicitmcp: %v\n%s", err, out)
	}
	logPath = filepath.Join(dir, "mcp-input.jsonl")
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"elicit": map[string]any{
		"type": "stdio", "command": bin, "env": map[string]string{"ELICIT_LOG": logPath}}}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b), logPath
}

// TestCLIElicitation: a stdio MCP server the CLI was configured with
// calls elicitation/create; the pinned CLI hands it to the host as a
// control_request "elicitation" (decoded as streamjson.Elicitation), and
// RespondElicitation's accept (with content) and decline reach the server
// as its result. Without an answer of the right shape the server gets
// "cancel" (the bridge's previous behaviour: an unsupported-request error).
func TestCLIElicitation(t *testing.T) {
	h := &harness{agenttest.NewHarness(t)}
	cfg, logPath := buildElicitMCP(t)
	opts := h.opts()
	opts.Args = []string{"--mcp-config", cfg}
	opts.AllowedTools = []string{"mcp__elicit__ask"}
	s, rec := h.start(opts)

	next := func() streamjson.Elicitation {
		return rec.Next(t, "elicitation request", func(ev streamjson.Event) bool {
			_, ok := ev.(streamjson.Elicitation)
			return ok
		}).(streamjson.Elicitation)
	}
	agenttest.Send(t, s, `[tool mcp__elicit__ask {"kind":"form"}]`)
	e := next()
	if e.Server != "elicit" || e.Mode != "form" || e.Message != "Where should I deploy?" || e.RequestID == "" ||
		!strings.Contains(string(e.Schema), `"enum":["staging","production"]`) || strings.Join(e.PropertyOrder, ",") != "confirm,env" {
		t.Fatalf("elicitation = %+v (schema %s)", e, e.Schema)
	}
	if !s.Busy() {
		t.Error("a session with an open elicitation is not busy (it could be evicted)")
	}
	if err := s.RespondElicitation(t.Context(), e.RequestID, streamjson.ElicitAccept, map[string]any{"env": "staging", "confirm": true}); err != nil {
		t.Fatal(err)
	}
	if err := s.RespondElicitation(t.Context(), e.RequestID, streamjson.ElicitDecline, nil); !errors.Is(err, ErrNotPending) {
		t.Errorf("a second answer: err = %v, want ErrNotPending", err)
	}
	if res := agenttest.NextResult(t, rec); !strings.Contains(res.Text, `elicitation result: {"action":"accept","content":{"confirm":true,"env":"staging"}}`) {
		t.Errorf("result = %q", res.Text)
	}

	agenttest.Send(t, s, `[tool mcp__elicit__ask {"kind":"text"}]`)
	e = next()
	if !strings.Contains(string(e.Schema), `"note"`) {
		t.Fatalf("second elicitation = %+v", e)
	}
	if err := s.RespondElicitation(t.Context(), e.RequestID, streamjson.ElicitDecline, nil); err != nil {
		t.Fatal(err)
	}
	if res := agenttest.NextResult(t, rec); !strings.Contains(res.Text, `elicitation result: {"action":"decline"}`) {
		t.Errorf("result = %q", res.Text)
	}
	in, _ := os.ReadFile(logPath)
	if !strings.Contains(string(in), `"elicitation":{"form":{},"url":{}}`) {
		t.Errorf("the CLI did not announce the elicitation capability to the server:\n%s", in)
	}
}
