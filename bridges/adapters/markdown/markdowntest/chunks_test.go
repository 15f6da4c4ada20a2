package markdowntest

import (
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

func TestOpenAtEnd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		f    Fences
		in   string
		want bool
	}{
		{Backticks, "", false},
		{Backticks, "```\ncode", true},
		{Backticks, "```\ncode\n```", false},
		{Backticks, "text\n  ```go\ncode", true},
		{Backticks, "a ``` b", false},    // not at the start of a line
		{Backticks, "> ```\n> x", false}, // quoted: not a fence line
		{CommonMark, "```\ncode", true},
		{CommonMark, "```\ncode\n```", false},
		{CommonMark, "~~~\n```\n", true},         // ``` does not close ~~~
		{CommonMark, "````\n```\n", true},        // a shorter run does not close
		{CommonMark, "```\nx\n``` y", true},      // a closer has nothing after it
		{CommonMark, "``` a`b\ncode", false},     // not an opener: backtick in the info string
		{CommonMark, "    ```\ncode", false},     // indented four spaces: code, not a fence
		{CommonMark, "~~~ go\nx\n~~~~~", false},  // a longer run closes
		{CommonMark, "```go\nx\n```\n~~~", true}, // a second block left open
	}
	for _, tt := range tests {
		if got := tt.f.OpenAtEnd(tt.in); got != tt.want {
			t.Errorf("Fences(%d).OpenAtEnd(%q) = %v, want %v", tt.f, tt.in, got, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	code := "```\n" + strings.Repeat("line\n", 4) + "```"
	tests := []struct {
		name   string
		f      Fences
		text   string
		chunks []string
		limit  int
		fails  string // part of the failure; "" when Check must pass
	}{
		{"whole", Backticks, "a b", []string{"a b"}, 10, ""},
		{"cut in a block, reopened", Backticks, code, []string{"```\nline\nline\n```", "```\nline\nline\n```"}, 20, ""},
		{"reopened with the info string", CommonMark, "```go\nx\ny\n```", []string{"```go\nx\n```", "```go\ny\n```"}, 20, ""},
		{"white space dropped at cuts", Backticks, "a\n\nb c", []string{"a", "b", "c"}, 2, ""},
		{"blank text as it is", CommonMark, "", []string{""}, 10, ""},
		{"blank text, no chunks", Backticks, "  ", nil, 10, ""},
		{"over the limit", Backticks, "abc", []string{"abc"}, 2, "runes > 2"},
		{"blank chunk", Backticks, "a\n\nb", []string{"a", " ", "b"}, 5, "blank"},
		{"block left open", Backticks, code, []string{"```\nline\nline", "line\nline\n```"}, 20, "inside a code block"},
		{"open block of unbalanced text is no failure", Backticks, "```\nx\ny", []string{"```\nx", "y"}, 10, ""},
		{"text lost", Backticks, "a b c", []string{"a", "c"}, 2, "lost"},
		{"text changed", CommonMark, "a b", []string{"a c"}, 5, "lost"},
		{"no chunks", Backticks, "a", nil, 5, "no chunks"},
		{"broken rune", Backticks, "é", []string{"\xc3"}, 5, "UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			failure := testkit.RunTB(func(tb *testkit.FakeTB) { Check(tb, tt.f, tt.text, tt.chunks, tt.limit) }).Failure()
			switch {
			case tt.fails == "" && failure != "":
				t.Errorf("Check failed: %s", failure)
			case tt.fails != "" && !strings.Contains(failure, tt.fails):
				t.Errorf("Check failure = %q, want one with %q", failure, tt.fails)
			}
		})
	}
}
