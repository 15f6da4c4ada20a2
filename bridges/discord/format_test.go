package discord

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestToDiscordGolden converts testdata/format/*.md and compares with the
// .golden files next to them (go test -run TestToDiscordGolden -update to
// rewrite them after a deliberate change).
func TestToDiscordGolden(t *testing.T) {
	t.Parallel()
	inputs, err := filepath.Glob(filepath.Join("testdata", "format", "*.md"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs: %v", err)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			got := toDiscord(string(src))
			golden := strings.TrimSuffix(in, ".md") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("toDiscord(%s) =\n%s\nwant\n%s", in, got, want)
			}
		})
	}
}

func TestToDiscordRules(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"empty", "", ""},
		{"h3 kept", "### Tests", "### Tests"},
		{"h4 bold", "#### Tests", "**Tests**"},
		{"h6 closing hashes", "###### Tests ###", "**Tests**"},
		{"not a heading", "####Tests", "####Tests"},
		{"rule", "a\n\n---\n\nb", "a\n\n" + horizontalRule + "\n\nb"},
		{"setext h2", "Title\n---", "## Title"},
		{"list then dashes is a rule", "- item\n---", "- item\n" + horizontalRule},
		{"heading in code untouched", "```\n#### x\n```", "```\n#### x\n```"},
		{"one-column table", "| a |\n|---|\n| b |", "```\na\n-\nb\n```"},
		{"pipe text is no table", "a | b\nc | d", "a | b\nc | d"},
		{"mismatched delimiter", "| a | b |\n|---|\n| c | d |", "| a | b |\n|---|\n| c | d |"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := toDiscord(tc.in); got != tc.want {
				t.Errorf("toDiscord(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestSplitMessage(t *testing.T) {
	t.Parallel()
	code := "```go\n" + strings.Repeat("fmt.Println(\"hello, world\")\n", 150) + "```"
	tests := []struct {
		name string
		text string
	}{
		{"short", "hello"},
		{"paragraphs", strings.Repeat(strings.Repeat("word ", 150)+"\n\n", 6)},
		{"code block", "Look:\n\n" + code + "\n\nDone."},
		{"one long word", strings.Repeat("é", 4500)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parts := splitMessage(tc.text, maxContentRunes)
			if len(parts) == 0 {
				t.Fatal("no parts")
			}
			total := 0
			for _, p := range parts {
				n := utf8.RuneCountInString(p)
				if n > maxContentRunes || n == 0 {
					t.Errorf("part of %d characters", n)
				}
				if strings.Count(p, "```")%2 != 0 {
					t.Errorf("unbalanced fence in part starting %q", p[:20])
				}
				if !utf8.ValidString(p) {
					t.Error("part cuts a rune")
				}
				total += strings.Count(p, "hello, world")
			}
			if want := strings.Count(tc.text, "hello, world"); total != want {
				t.Errorf("code lines across parts = %d, want %d", total, want)
			}
			if utf8.RuneCountInString(tc.text) <= maxContentRunes && (len(parts) != 1 || parts[0] != tc.text) {
				t.Errorf("short text changed: %q", parts)
			}
		})
	}
	if got := truncateMessage(code, 500); utf8.RuneCountInString(got) > 500 || !strings.HasSuffix(got, "```\n…") {
		t.Errorf("truncateMessage = %d runes, ends %q", utf8.RuneCountInString(got), got[len(got)-8:])
	}
	if got := truncateRunes("Approve the deployment", 10); got != "Approve t…" {
		t.Errorf("truncateRunes = %q", got)
	}
}

func TestThreadName(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 40)
	tests := []struct{ text, want string }{
		{"fix the **flaky** test in `ci.yml`", "fix the flaky test in ci.yml"},
		{"multi\nline\n\nmessage", "multi line message"},
		{"<@123> ping <#456> here", "ping here"},
		{"", "Conversation with Ada"},
		{"   ", "Conversation with Ada"},
		{long, strings.TrimSpace(strings.Repeat("word ", 19)) + " word…"},
		{strings.Repeat("x", 150), strings.Repeat("x", 99) + "…"},
	}
	for _, tc := range tests {
		got := threadName(tc.text, "Ada")
		if got != tc.want {
			t.Errorf("threadName(%q) = %q, want %q", tc.text, got, tc.want)
		}
		if n := utf8.RuneCountInString(got); n < 1 || n > maxThreadName {
			t.Errorf("threadName(%q) has %d characters", tc.text, n)
		}
	}
}
