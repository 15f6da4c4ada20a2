package render_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/render"
)

func TestToolLine(t *testing.T) {
	tests := []struct {
		name, input, want string
		parent            string
	}{
		{"Bash", `{"command":"git status\ngit diff"}`, "› `Bash: git status`", ""},
		{"Bash", `{"command":"sleep 9","run_in_background":true}`, "› `Bash: sleep 9 (background)`", ""},
		{"Edit", `{"file_path":"/srv/project/cmd/main.go"}`, "› `Edit: cmd/main.go`", ""},
		{"Write", `{"file_path":"/etc/hosts"}`, "› `Write: /etc/hosts`", ""},
		{"Read", `{"file_path":"/srv/project/README.md"}`, "› `Read: README.md`", ""},
		{"WebFetch", `{"url":"https://example.com/x"}`, "› `WebFetch: https://example.com/x`", ""},
		{"Grep", `{"pattern":"TODO","path":"/srv/project/agent"}`, "› `Grep: TODO in agent`", ""},
		{"Agent", `{"description":"explore the repo"}`, "  › `Agent: explore the repo`", "toolu_1"},
		{"mcp__gh__issue", `{"n":1}`, "› `mcp__gh__issue: {\"n\":1}`", ""},
		// An MCP tool's own "description" argument is not a title: its input shows.
		{"mcp__gh__issue", `{"description":"body"}`, "› `mcp__gh__issue: {\"description\":\"body\"}`", ""},
		// An ACP agent's call of a kind the bridge does not map: its title.
		{"Other", `{"arguments":{"path":"a"},"description":"Tool: bridge/send_file"}`, "› `Other: Tool: bridge/send_file`", ""},
		{"Other", `{"arguments":{"path":"a"}}`, "› `Other: {\"arguments\":{\"path\":\"a\"}}`", ""},
		{"Bash", "{\"command\":\"echo `date`\"}", "› `` Bash: echo `date` ``", ""},
		{"AskUserQuestion", `{}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got := render.ToolLine(streamjson.ToolUse{Name: tt.name, Input: json.RawMessage(tt.input), ParentToolUseID: tt.parent}, "/srv/project")
			if got != tt.want {
				t.Errorf("ToolLine = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestPermissionBodyTitleOnly: an ACP agent's request that names a call
// by its title only (Gemini CLI's MCP tools) reads as that title, once.
func TestPermissionBodyTitleOnly(t *testing.T) {
	got := render.PermissionBody("Other", json.RawMessage(`{"description":"send_file (bridge MCP Server)"}`), "send_file (bridge MCP Server)", "", "/srv/project")
	if want := "🔐 **Other** wants to run `send_file (bridge MCP Server)`"; got != want {
		t.Errorf("body = %q, want %q", got, want)
	}
	// An MCP tool's only argument named "description" is its input.
	got = render.PermissionBody("mcp__x__y", json.RawMessage(`{"description":"t"}`), "", "", "/srv/project")
	if !strings.Contains(got, "```json") {
		t.Errorf("body = %q", got)
	}
	// With arguments, they show, and a description that differs stays.
	got = render.PermissionBody("Other", json.RawMessage(`{"description":"t","path":"a"}`), "why", "", "/srv/project")
	if !strings.Contains(got, "\"path\": \"a\"") || !strings.HasSuffix(got, "> why") {
		t.Errorf("body = %q", got)
	}
}

func TestPermissionBody(t *testing.T) {
	many := strings.Repeat("line\n", 30)
	tests := []struct {
		name, tool, input string
		want              []string
		not               []string
	}{
		{"bash", "Bash", `{"command":"rm -rf build"}`, []string{"🔐 **Bash** wants to run:", "```sh\nrm -rf build\n```"}, nil},
		{"write", "Write", `{"file_path":"/srv/project/a.txt","content":` + jsonString(many) + `}`,
			[]string{"wants to write `a.txt` (30 lines)", "… 19 more lines"}, []string{strings.Repeat("line\n", 13)}},
		{"edit", "Edit", `{"file_path":"/srv/project/x.go","old_string":"a := 1","new_string":"a := 2","replace_all":true}`,
			[]string{"wants to edit `x.go` (every occurrence)", "```diff\n- a := 1\n+ a := 2\n```"}, nil},
		{"webfetch", "WebFetch", `{"url":"https://example.com","prompt":"summarise"}`, []string{"wants to fetch https://example.com", "> summarise"}, nil},
		{"other", "mcp__db__query", `{"sql":"select 1"}`, []string{"```json\n{\n  \"sql\": \"select 1\"\n}\n```"}, nil},
		{"fence in command", "Bash", "{\"command\":\"cat <<EOF\\n```\\nEOF\"}", []string{"````sh\n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render.PermissionBody(tt.tool, json.RawMessage(tt.input), "", "", "/srv/project")
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("body lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(got, w) {
					t.Errorf("body has %q:\n%s", w, got)
				}
			}
		})
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestFormatting(t *testing.T) {
	if got := render.Footer(4200*time.Millisecond, 0.0123); got != "_4.2s · $0.0123_" {
		t.Errorf("Footer = %q", got)
	}
	if got := render.Footer(125*time.Second, 1.5); got != "_2m05s · $1.5000_" {
		t.Errorf("Footer = %q", got)
	}
	for d, want := range map[time.Duration]string{10 * time.Minute: "10m", 90 * time.Minute: "1h30m", 45 * time.Second: "45s", 0: "0s"} {
		if got := render.FormatWait(d); got != want {
			t.Errorf("render.FormatWait(%s) = %q, want %q", d, got, want)
		}
	}
	if got := render.CodeSpan("a``b"); got != "```a``b```" {
		t.Errorf("CodeSpan = %q", got)
	}
	if got := render.Tail(strings.Repeat("word ", 100), 50); !strings.HasPrefix(got, "…\n") || len([]rune(got)) > 50 {
		t.Errorf("Tail = %q", got)
	}
}

// A standby replica's bot says who holds the connection (!status).
func TestStateSummaryStandby(t *testing.T) {
	s := bridges.BotStatus{Bot: "guild", BotState: bridges.BotState{State: bridges.ConnStandby, Reason: "replica r-2 holds the connection"}}
	if got, want := render.StateSummary(s, time.Now()), "standby: replica r-2 holds the connection"; got != want {
		t.Errorf("StateSummary = %q, want %q", got, want)
	}
}
