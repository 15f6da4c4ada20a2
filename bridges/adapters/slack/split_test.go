package slack

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges/adapters/markdown/markdowntest"
)

func TestSplitMrkdwn(t *testing.T) {
	para := strings.Repeat("word ", 30) // 150 runes
	link := "<https://example.com/" + strings.Repeat("x", 40) + "|label>"
	code := "```\n" + strings.Repeat("line of code\n", 20) + "```"
	tests := []struct {
		name  string
		in    string
		limit int
		check func(t *testing.T, chunks []string)
	}{
		{
			name: "fits", in: "short text", limit: 100,
			check: func(t *testing.T, c []string) { wantChunks(t, c, "short text") },
		},
		{
			name: "empty", in: "", limit: 100,
			check: func(t *testing.T, c []string) { wantChunks(t, c) },
		},
		{
			name: "paragraph boundary preferred", in: "first paragraph here\n\nsecond one is longer", limit: 32,
			check: func(t *testing.T, c []string) { wantChunks(t, c, "first paragraph here", "second one is longer") },
		},
		{
			name: "words", in: para, limit: 64,
			check: func(t *testing.T, c []string) {
				for _, ch := range c {
					if strings.HasPrefix(ch, " ") || strings.Contains(ch, "wor ") {
						t.Errorf("bad word cut: %q", ch)
					}
				}
			},
		},
		{
			name: "link kept whole", in: strings.Repeat("a ", 20) + link + " tail", limit: 80,
			check: func(t *testing.T, c []string) {
				found := false
				for _, ch := range c {
					if strings.Count(ch, "<") != strings.Count(ch, ">") {
						t.Errorf("link split: %q", ch)
					}
					found = found || strings.Contains(ch, link)
				}
				if !found {
					t.Errorf("link not found whole in %q", c)
				}
			},
		},
		{
			name: "entity kept whole", in: strings.Repeat("x", 37) + "&amp;" + strings.Repeat("y", 30), limit: 40,
			check: func(t *testing.T, c []string) {
				if !strings.Contains(strings.Join(c, ""), "&amp;") {
					t.Errorf("entity split: %q", c)
				}
			},
		},
		{
			name: "inline code kept whole", in: strings.Repeat("z", 30) + " `a b c d e f` tail", limit: 40,
			check: func(t *testing.T, c []string) {
				for _, ch := range c {
					if strings.Count(ch, "`")%2 != 0 {
						t.Errorf("code span split: %q", ch)
					}
				}
			},
		},
		{
			name: "fence closed and reopened", in: "intro\n\n" + code + "\n\nafter", limit: 100,
			check: func(t *testing.T, c []string) {
				if len(c) < 3 {
					t.Fatalf("want several chunks, got %q", c)
				}
				for _, ch := range c {
					if n := strings.Count(ch, "```"); n%2 != 0 {
						t.Errorf("unbalanced fence in %q", ch)
					}
				}
				if got := strings.Count(strings.Join(c, "\n"), "line of code"); got != 20 {
					t.Errorf("lost code lines: %d of 20", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chunks := splitMrkdwn(tt.in, tt.limit)
			for _, ch := range chunks {
				if n := utf8.RuneCountInString(ch); n > tt.limit {
					t.Errorf("chunk of %d runes > %d: %q", n, tt.limit, ch)
				}
			}
			tt.check(t, chunks)
		})
	}
}

func wantChunks(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) {
		t.Errorf("chunks = %q, want %q", got, want)
	}
}

// FuzzSplitMrkdwn checks the splitter's contract on converted Markdown
// (markdowntest.Check): no chunk is over the limit or blank, every chunk
// ends outside a ``` block, and no visible text is lost.
func FuzzSplitMrkdwn(f *testing.F) {
	f.Add("para one\n\npara two with [link](https://e.com) and `code`", 40)
	f.Add("```\n"+strings.Repeat("x < y\n", 30)+"```", 50)
	f.Add(strings.Repeat("€", 500), 33)
	f.Add("- item\n\n  ```\n  code\n  ```\n\n> ```\n> quoted\n> ```", 32)
	f.Fuzz(func(t *testing.T, md string, limit int) {
		if limit < 32 || limit > 5000 || len(md) > 20000 {
			t.Skip()
		}
		in := ToMrkdwn(md)
		markdowntest.Check(t, markdowntest.Backticks, in, splitMrkdwn(in, limit), limit)
	})
}
