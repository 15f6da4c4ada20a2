package config

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMCPServersACP: a profile of kind acp takes mcp_servers (offered to
// the agent in session/new) and check-config's summary lists them.
func TestMCPServersACP(t *testing.T) {
	c := mustParse(t, src(
		"agents:",
		"  coder:",
		"    kind: acp",
		"    command: codex-acp",
		"    mcp_servers:",
		"      deploy: { command: /usr/local/bin/deploy-mcp, env: { TOKEN: \"${T}\" } }",
		"bots:",
		"  - {name: phone, platform: whatsapp, agent: coder}",
	), map[string]string{"T": "tok-secret"})
	if s := c.Agents["coder"].MCPServers["deploy"]; s.Command != "/usr/local/bin/deploy-mcp" {
		t.Fatalf("server = %+v", s)
	}
	if sum := c.Summary(); !strings.Contains(sum, "    mcp_servers: deploy(command=/usr/local/bin/deploy-mcp env=TOKEN)\n") || strings.Contains(sum, "tok-secret") {
		t.Errorf("summary:\n%s", sum)
	}
}

func TestMCPServers(t *testing.T) {
	c := mustParse(t, src(
		"agents:",
		"  coder:",
		"    mcp_servers:",
		"      deploy: { command: /usr/local/bin/deploy-mcp, args: [--fast], env: { TOKEN: \"${T}\" } }",
		"bots:",
		"  - {name: phone, platform: whatsapp, agent: coder}",
	), map[string]string{"T": "tok-secret"})
	s := c.Agents["coder"].MCPServers["deploy"]
	if s.Command != "/usr/local/bin/deploy-mcp" || len(s.Args) != 1 || s.Env["TOKEN"] != "tok-secret" {
		t.Fatalf("server = %+v", s)
	}
	if sum := c.Summary(); !strings.Contains(sum, "    mcp_servers: deploy(command=/usr/local/bin/deploy-mcp env=TOKEN)\n") || strings.Contains(sum, "tok-secret") {
		t.Errorf("summary:\n%s", sum)
	}
	if b, err := json.Marshal(c.Agents["coder"]); err != nil || strings.Contains(string(b), "tok-secret") {
		t.Errorf("JSON of the profile: %s, %v", b, err)
	}
	if strings.Contains(mustParse(t, withRetention(), nil).Summary(), "mcp_servers") {
		t.Error("a profile without MCP servers mentions them")
	}
	cases := []struct{ name, line, path, msg string }{
		{"reserved", "      bridge: { command: x }", "agents.coder.mcp_servers.bridge", "the bridge's own"},
		{"bad name", "      \"a b\": { command: x }", "agents.coder.mcp_servers.a b", "bad MCP server name"},
		{"no command", "      deploy: { args: [x] }", "agents.coder.mcp_servers.deploy.command", "needs a command"},
		{"unknown key", "      deploy: { command: x, cwd: /tmp }", "agents.coder.mcp_servers.deploy.cwd", "unknown"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := problemsOf(t, src("agents:", "  coder:", "    mcp_servers:", tc.line, "bots:",
				"  - {name: phone, platform: whatsapp, agent: coder}"), nil)
			if len(got) != 1 {
				t.Fatalf("got %d problems, want 1:\n%s", len(got), fmtProblems(got))
			}
			if p := got[0]; p.Line != 4 || p.Path != tc.path || !strings.Contains(p.Msg, tc.msg) {
				t.Errorf("problem = %s; want line 4, path %s, message containing %q", p, tc.path, tc.msg)
			}
		})
	}
}
