package whatsapp

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges/adapters/markdown"
	"github.com/agentbridge/agentbridge/bridges/adapters/markdown/markdowntest"
)

// TestSplitGolden renders and splits every testdata/split/NAME.LIMIT.md.
func TestSplitGolden(t *testing.T) {
	for _, in := range goldenInputs(t, "split") {
		name := strings.TrimSuffix(filepath.Base(in), ".md")
		t.Run(name, func(t *testing.T) {
			limit, err := strconv.Atoi(filepath.Ext(name)[1:])
			if err != nil {
				t.Fatalf("file name %s must end in .<limit>.md", in)
			}
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			for i, c := range splitText(toWhatsApp(string(src)), limit) {
				checkChunk(t, c, limit)
				fmt.Fprintf(&got, "----- chunk %d (%d runes) -----\n%s\n", i+1, utf8.RuneCountInString(c), c)
			}
			golden(t, in, got.String())
		})
	}
}

func TestSplitText(t *testing.T) {
	long := strings.Repeat("word ", 1000) // 5,000 runes
	tests := []struct {
		name  string
		in    string
		limit int
		parts int
	}{
		{"empty", "", 100, 0},
		{"blank", " \n ", 100, 0},
		{"fits", "hello", 100, 1},
		{"long text at the default limit", long, maxTextRunes, 2},
		{"paragraphs", "aaaa bbbb\n\ncccc dddd", 12, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := splitText(tt.in, tt.limit)
			if len(got) != tt.parts {
				t.Fatalf("splitText gave %d parts, want %d: %q", len(got), tt.parts, got)
			}
			for _, c := range got {
				checkChunk(t, c, tt.limit)
			}
		})
	}
}

// checkChunk asserts the splitter's contract for one chunk.
func checkChunk(tb testing.TB, c string, limit int) {
	tb.Helper()
	if n := utf8.RuneCountInString(c); n > limit {
		tb.Fatalf("chunk of %d runes > %d: %q", n, limit, c)
	}
	if strings.TrimSpace(c) == "" {
		tb.Fatalf("blank chunk")
	}
	checkFences(tb, c)
}

// checkFences asserts that s opens as many ``` blocks as it closes: the
// fence lines (the only place the renderer writes ```) come in pairs, and
// no other ``` appears.
func checkFences(tb testing.TB, s string) {
	tb.Helper()
	fences := 0
	for line := range strings.SplitSeq(s, "\n") {
		if line == markdown.CodeFence {
			fences++
		}
	}
	if fences%2 != 0 {
		tb.Fatalf("unbalanced ``` lines (%d) in %q", fences, s)
	}
	if n := strings.Count(s, markdown.CodeFence); n != fences && !strings.Contains(s, "````") {
		tb.Fatalf("``` outside fence lines (%d of %d) in %q", n-fences, n, s)
	}
}

// FuzzSplitText renders arbitrary Markdown and splits it: every chunk is
// within the limit, not blank, and has balanced ``` blocks with no ```
// elsewhere, and no text is lost (markdowntest.Check).
func FuzzSplitText(f *testing.F) {
	for _, dir := range []string{"format", "split"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.md"))
		for _, in := range files {
			if b, err := os.ReadFile(in); err == nil {
				f.Add(string(b), 60)
			}
		}
	}
	f.Add("```\n"+strings.Repeat("x\n", 50)+"```", 20)
	f.Add("- a\n\n  ```\n  b\n  ```\n> ```\n> c", 16)
	f.Add("``x```y`` ``` `", 16)
	f.Fuzz(func(t *testing.T, md string, limit int) {
		if limit < 16 || limit > 5000 || len(md) > 20000 {
			t.Skip()
		}
		text := toWhatsApp(md)
		chunks := splitText(text, limit)
		markdowntest.Check(t, markdowntest.Backticks, text, chunks, limit)
		for _, c := range chunks {
			checkFences(t, c)
		}
	})
}
