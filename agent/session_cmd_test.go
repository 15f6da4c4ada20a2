package agent

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestCLIArgs(t *testing.T) {
	base := []string{"-p", "--output-format", "stream-json", "--input-format", "stream-json", "--verbose",
		"--permission-prompt-tool", "stdio", "--include-partial-messages", "--setting-sources", "project,local", "--strict-mcp-config"}
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{"new session", Options{SessionID: "id-1"}, append(slices.Clone(base), "--session-id", "id-1")},
		{"resume", Options{SessionID: "id-1", Resume: true}, append(slices.Clone(base), "--resume", "id-1")},
		{"everything", Options{
			SessionID: "id-2", Model: "claude-sonnet-5-5", PermissionMode: "acceptEdits",
			AllowedTools: []string{"Read", "Bash(git *)"}, DisallowedTools: []string{"WebFetch"},
			AppendSystemPrompt: "Be brief.", MaxTurns: 7, Args: []string{"--add-dir", "/data"},
		}, append(slices.Clone(base), "--session-id", "id-2", "--model", "claude-sonnet-5-5", "--permission-mode", "acceptEdits",
			"--allowed-tools=Read", "--allowed-tools=Bash(git *)", "--disallowed-tools=WebFetch",
			"--append-system-prompt", "Be brief.", "--max-turns", "7", "--add-dir", "/data")},
		{"host MCP servers", Options{SessionID: "id-4", MCPServers: map[string]MCPServer{"bridge": nil}},
			append(slices.Clone(base), "--session-id", "id-4", "--mcp-config", `{"mcpServers":{"bridge":{"type":"sdk","name":"bridge"}}}`)},
		{"bypass", Options{SessionID: "id-3", PermissionMode: "bypassPermissions"},
			append(slices.Clone(base), "--session-id", "id-3", "--permission-mode", "bypassPermissions")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cliArgs(tt.opts); !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestCLIEnv(t *testing.T) {
	t.Setenv("PATH", "/bin:/usr/bin")
	t.Setenv("LANG", "")
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-secret")
	t.Setenv("HOME", "/home/bridge")
	tests := []struct {
		name string
		opts Options
		want []string
	}{
		{"defaults", Options{}, []string{"HOME=/home/bridge", "LANG=C.UTF-8", "PATH=/bin:/usr/bin", "TMPDIR=/tmp/s1"}},
		{"private state dir wins over env", Options{StateDir: "/data/sessions/s1", Env: map[string]string{"CLAUDE_CONFIG_DIR": "/shared"}},
			[]string{"CLAUDE_CONFIG_DIR=/data/sessions/s1/claude", "HOME=/home/bridge", "LANG=C.UTF-8", "PATH=/bin:/usr/bin", "TMPDIR=/tmp/s1"}},
		{"home and env", Options{Home: "/srv/agent", Env: map[string]string{"ANTHROPIC_API_KEY": "k", "LANG": "de_DE.UTF-8"}},
			[]string{"ANTHROPIC_API_KEY=k", "HOME=/srv/agent", "LANG=de_DE.UTF-8", "PATH=/bin:/usr/bin", "TMPDIR=/tmp/s1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cliEnv(tt.opts, "/tmp/s1")
			if !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
			if strings.Contains(strings.Join(got, " "), "xoxb") {
				t.Error("bridge secret in agent env")
			}
		})
	}
}

func TestOptionsBypassAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only meaningful as root")
	}
	o := Options{Workdir: t.TempDir(), PermissionMode: "bypassPermissions"}
	if _, err := o.Normalized(); err == nil {
		t.Error("bypassPermissions as root without IS_SANDBOX accepted")
	}
	o.Env = map[string]string{"IS_SANDBOX": "1"}
	if _, err := o.Normalized(); err != nil {
		t.Errorf("with IS_SANDBOX=1: %v", err)
	}
}

func TestRedactSecrets(t *testing.T) {
	tests := []struct{ in, want string }{
		{"key sk-ant-api03-abcdefgh done", "key [redacted] done"},
		{"token xoxb-1234-5678-abcd", "token [redacted]"},
		{"Authorization: Bearer abc.def-ghi_123", "Authorization: [redacted]"},
		{"GITHUB_TOKEN=ghx123 next", "GITHUB_TOKEN=[redacted] next"},
		{`"api_key": "zzz"`, `"api_key": "[redacted]"`},
		{"No conversation found with session ID: 00000000-0000-4000-8000-000000000000", "No conversation found with session ID: 00000000-0000-4000-8000-000000000000"},
		{"path /tmp/agentbridge-agent-123/claude-0/-srv-project/tasks/x.output", "path /tmp/agentbridge-agent-123/claude-0/-srv-project/tasks/x.output"},
		{"blob " + strings.Repeat("Ab9", 20), "blob [redacted]"},
	}
	for _, tt := range tests {
		if got := redactSecrets(tt.in); got != tt.want {
			t.Errorf("redactSecrets(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTailBuffer(t *testing.T) {
	tb := newTailBuffer(10)
	_, _ = tb.Write([]byte("hello "))
	_, _ = tb.Write([]byte("world!"))
	if got := tb.String(); got != "llo world!" {
		t.Errorf("got %q", got)
	}
	_, _ = tb.Write([]byte(strings.Repeat("z", 30) + "END"))
	if got := tb.String(); got != "zzzzzzzEND" {
		t.Errorf("got %q", got)
	}
}
