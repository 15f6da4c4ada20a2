package core

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config"
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
		{"Bash", "{\"command\":\"echo `date`\"}", "› `` Bash: echo `date` ``", ""},
		{"AskUserQuestion", `{}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			got := toolLine(streamjson.ToolUse{Name: tt.name, Input: json.RawMessage(tt.input), ParentToolUseID: tt.parent}, "/srv/project")
			if got != tt.want {
				t.Errorf("toolLine = %q, want %q", got, tt.want)
			}
		})
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
			got := permissionBody(tt.tool, json.RawMessage(tt.input), "", "", "/srv/project")
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

func TestChoiceFromText(t *testing.T) {
	full := (&card{kind: cardPermission, always: []json.RawMessage{}}).buttons()
	short := (&card{kind: cardPermission}).buttons() // no Always allow
	plan := (&card{kind: cardPlan}).buttons()
	tests := []struct {
		buttons []bridges.Button
		in      string
		want    string
	}{
		{full, "1", bridges.ChoiceAllow}, {full, "Yes", bridges.ChoiceAllow}, {full, "yes!", bridges.ChoiceAllow}, {full, "👍🏽", bridges.ChoiceAllow},
		{full, "3", bridges.ChoiceAlways}, {full, "always", bridges.ChoiceAlways}, {full, "2", bridges.ChoiceDeny}, {full, "No.", bridges.ChoiceDeny},
		{full, "deny", bridges.ChoiceDeny}, {full, "👎", bridges.ChoiceDeny}, {full, "maybe", ""}, {full, "12", ""}, {full, "0", ""},
		{short, "2", bridges.ChoiceDeny}, {short, "3", ""}, {short, "always", ""}, {short, "no", bridges.ChoiceDeny},
		{plan, "1", bridges.ChoiceApprove}, {plan, "3", bridges.ChoiceApproveEdits}, {plan, "2", bridges.ChoiceReject}, {plan, "ok", bridges.ChoiceApprove},
		{plan, "reject", bridges.ChoiceReject},
	}
	for _, tt := range tests {
		if got := bridges.ChoiceFromText(tt.buttons, tt.in); got != tt.want {
			t.Errorf("ChoiceFromText(%v, %q) = %q, want %q", tt.buttons, tt.in, got, tt.want)
		}
	}
	if got := bridges.NumberedChoices(short); got != "**1** Allow · **2** Deny" {
		t.Errorf("NumberedChoices = %q", got)
	}
	// The same digit means the same on every card (issue 24, finding 2).
	if got := bridges.NumberedChoices(full); got != "**1** Allow · **2** Deny · **3** Always allow" {
		t.Errorf("NumberedChoices = %q", got)
	}
	if got := bridges.NumberedChoices(plan); got != "**1** Approve · **2** Reject · **3** Approve + accept edits" {
		t.Errorf("NumberedChoices = %q", got)
	}
}

func TestFormatting(t *testing.T) {
	if got := footer(4200*time.Millisecond, 0.0123); got != "_4.2s · $0.0123_" {
		t.Errorf("footer = %q", got)
	}
	if got := footer(125*time.Second, 1.5); got != "_2m05s · $1.5000_" {
		t.Errorf("footer = %q", got)
	}
	for d, want := range map[time.Duration]string{10 * time.Minute: "10m", 90 * time.Minute: "1h30m", 45 * time.Second: "45s", 0: "0s"} {
		if got := formatWait(d); got != want {
			t.Errorf("formatWait(%s) = %q, want %q", d, got, want)
		}
	}
	if got := codeSpan("a``b"); got != "```a``b```" {
		t.Errorf("codeSpan = %q", got)
	}
	if got := tail(strings.Repeat("word ", 100), 50); !strings.HasPrefix(got, "…\n") || len([]rune(got)) > 50 {
		t.Errorf("tail = %q", got)
	}
}

func TestBudget(t *testing.T) {
	var b budget
	t0 := time.Unix(0, 0)
	iv := time.Second
	if w := b.take(t0, iv, false); w != 0 {
		t.Fatalf("first streaming edit waits %s", w)
	}
	if w := b.take(t0.Add(300*time.Millisecond), iv, false); w != 700*time.Millisecond {
		t.Fatalf("second edit within the interval waits %s, want 700ms", w)
	}
	if w := b.take(t0.Add(300*time.Millisecond), iv, true); w != 0 {
		t.Fatal("an urgent post must never wait")
	}
	// The urgent post pushed the next streaming slot back.
	if w := b.take(t0.Add(time.Second), iv, false); w != time.Second {
		t.Fatalf("streaming after an urgent post waits %s, want 1s", w)
	}
	if w := b.take(t0.Add(2*time.Second), iv, false); w != 0 {
		t.Fatalf("streaming after the slot waits %s", w)
	}
}

func TestTurnFinal(t *testing.T) {
	tr := newTurn(time.Now())
	tr.addDelta("Let me ")
	tr.addDelta("check.")
	tr.addText("Let me check.")
	tr.addTool(streamjson.ToolUse{ID: "1", Name: "Bash"}, "› `Bash: ls`")
	tr.addDelta("Done: 3 files.")
	activity, answer := tr.final("Done: 3 files.")
	if answer != "Done: 3 files." || render(activity) != "Let me check.\n\n› `Bash: ls`" {
		t.Errorf("final = %q / %q", render(activity), answer)
	}
	_, answer = tr.final("")
	if answer != "Done: 3 files." {
		t.Errorf("empty result text should fall back to the last block: %q", answer)
	}
}

// fileSettings stands in for the settings of an adapter that keeps a
// bot's credentials in a file (a WhatsApp device store).
type fileSettings struct{ file string }

func (s fileSettings) String() string        { return "files{" + s.file + "}" }
func (s fileSettings) Summary() string       { return "" }
func (s fileSettings) SecretFiles() []string { return []string{s.file} }

func TestSecretPaths(t *testing.T) {
	cfg := &config.Config{DataDir: "/srv/data", Path: "/etc/bridge.yaml", Bots: []*config.Bot{
		{Name: "s", Platform: "slack"},
		{Name: "p", Platform: "whatsapp", Settings: fileSettings{"/var/lib/wa/phone.db"}},
	}}
	got := secretPaths(cfg)
	want := []string{"/srv/data", "/etc/bridge.yaml", "/var/lib/wa/phone.db"}
	if !slices.Equal(got, want) {
		t.Errorf("secretPaths = %q, want %q", got, want)
	}
}
