package fakemodel

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseScript(t *testing.T) {
	tests := []struct {
		text    string
		want    Script // Directives and Args are not compared
		wantErr string
	}{
		{text: "hello", want: Script{Action: ActionPong}},
		{text: "see [1] and [link](x)", want: Script{Action: ActionPong}},
		{text: "[slow 5] hi", want: Script{Action: ActionPong, Chunks: 5, Delay: DefaultSlowDelay}},
		{text: "[slowms 20] [slow 3]", want: Script{Action: ActionPong, Chunks: 3, Delay: 20 * time.Millisecond}},
		{text: "[slow 3][slowms 20]", want: Script{Action: ActionPong, Chunks: 3, Delay: 20 * time.Millisecond}},
		{text: "please [bash touch x] now", want: Script{Action: ActionBash, Command: "touch x"}},
		{text: "[bash [ -f x ] && echo yes]", want: Script{Action: ActionBash, Command: "[ -f x ] && echo yes"}},
		{text: "[bgbash sleep 1 && touch bg.txt]", want: Script{Action: ActionBgBash, Command: "sleep 1 && touch bg.txt"}},
		{text: "[write notes.txt hello world]", want: Script{Action: ActionWrite, Path: "notes.txt", Content: "hello world"}},
		{text: `[write /a/b.txt "line 1\nline 2"]`, want: Script{Action: ActionWrite, Path: "/a/b.txt", Content: "line 1\nline 2"}},
		{text: "[edit f.txt alpha gamma]", want: Script{Action: ActionEdit, Path: "f.txt", OldString: "alpha", NewString: "gamma"}},
		{text: `[edit f.txt "two words" "new text"]`, want: Script{Action: ActionEdit, Path: "f.txt", OldString: "two words", NewString: "new text"}},
		{text: "[edit f.txt a b c]", want: Script{Action: ActionEdit, Path: "f.txt", OldString: "a", NewString: "b c"}},
		{text: "[ask Which db? | Postgres | MySQL ]", want: Script{Action: ActionAsk, Question: "Which db?", Options: []string{"Postgres", "MySQL"}}},
		{text: "[askmulti Which? | A | B | C]", want: Script{Action: ActionAskMulti, Question: "Which?", Options: []string{"A", "B", "C"}}},
		{text: "[long 5000]", want: Script{Action: ActionLong, Length: 5000}},
		{text: "[error 529]", want: Script{Action: ActionError, Status: 529}},
		{text: "[echo-history]", want: Script{Action: ActionEchoHistory}},
		{text: "[slow 2] [bash ls] [error 500]", want: Script{Action: ActionBash, Command: "ls", Chunks: 2, Delay: DefaultSlowDelay}},
		{text: "[bashful] [asking x]", want: Script{Action: ActionPong}},
		{text: `[tool mcp__bridge__send_message {"text":"hi [there]"}]`, want: Script{Action: ActionTool,
			Tool: ToolCall{Name: "mcp__bridge__send_message", Input: map[string]any{"text": "hi [there]"}}}},
		{text: "[tool mcp__bridge__list_schedules]", want: Script{Action: ActionTool, Tool: ToolCall{Name: "mcp__bridge__list_schedules", Input: map[string]any{}}}},
		{text: `[bgbash sleep 1] [ondone mcp__bridge__send_message {"text":"done"}]`, want: Script{Action: ActionBgBash, Command: "sleep 1",
			OnDone: ToolCall{Name: "mcp__bridge__send_message", Input: map[string]any{"text": "done"}}}},
		{text: "[tool ]", wantErr: "missing tool name"},
		{text: "[tool x [1]]", wantErr: "JSON object"},
		{text: "[ondone x nope]", wantErr: "JSON object"},
		{text: "[bash unterminated", want: Script{Action: ActionPong}},
		{text: "[slow x]", wantErr: "positive integer"},
		{text: "[slow 0]", wantErr: "positive integer"},
		{text: "[error 200]", wantErr: "400..599"},
		{text: "[bash ]", wantErr: "missing command"},
		{text: "[write onlypath]", wantErr: "want 2 arguments"},
		{text: "[edit f.txt old]", wantErr: "want 3 arguments"},
		{text: `[edit f.txt "bad]`, wantErr: "bad quoted"},
		{text: "[ask | a | b]", wantErr: "missing question"},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			got, err := ParseScript(tc.text)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			got.Directives, got.Args = nil, ""
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseScriptRecordsDirectives(t *testing.T) {
	s, err := ParseScript("x [slow 2] y [bash echo [a]] z")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"[slow 2]", "[bash echo [a]]"}
	if !reflect.DeepEqual(s.Directives, want) {
		t.Errorf("Directives = %q, want %q", s.Directives, want)
	}
	if s.Args != "echo [a]" {
		t.Errorf("Args = %q", s.Args)
	}
}

func TestLongText(t *testing.T) {
	for _, n := range []int{50, 500, 1500, 3999, 4000, 10000, 40000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			got := longText(n)
			if diff := len(got) - n; diff < -n/10-5 || diff > n/10+5 {
				t.Errorf("len = %d, want about %d", len(got), n)
			}
			if n >= 400 && !strings.Contains(got, "```go\n") {
				t.Errorf("no ```go fence")
			}
			if n >= 200 && !strings.Contains(got, "\n\n") {
				t.Errorf("no paragraph break")
			}
			if n >= longCodeThreshold {
				code := codeBlock(got)
				if len(code) <= 2000 {
					t.Errorf("code block is %d chars, want > 2000", len(code))
				}
			}
			if longText(n) != got {
				t.Errorf("not deterministic")
			}
		})
	}
}

// codeBlock returns the first fenced code block of md, fences included.
func codeBlock(md string) string {
	start := strings.Index(md, "```go\n")
	if start < 0 {
		return ""
	}
	end := strings.Index(md[start+6:], "```")
	if end < 0 {
		return ""
	}
	return md[start : start+6+end+3]
}
