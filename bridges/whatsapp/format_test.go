package whatsapp

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges/markdown"
)

var update = flag.Bool("update", false, "rewrite testdata/*/*.golden from the current output")

// golden compares got with the .golden file next to the input in (or
// rewrites it with -update).
func golden(t *testing.T, in, got string) {
	t.Helper()
	path := strings.TrimSuffix(in, ".md") + ".golden"
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -run Golden -update to accept):\n%s", path, got)
	}
}

func goldenInputs(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata in %s: %v", dir, err)
	}
	return files
}

// TestFormatGolden renders every testdata/format/*.md file.
func TestFormatGolden(t *testing.T) {
	for _, in := range goldenInputs(t, "format") {
		t.Run(filepath.Base(in), func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			got := toWhatsApp(string(src))
			checkFences(t, got)
			golden(t, in, got+"\n")
		})
	}
}

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

func TestFormatInline(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"bold", "**b**", "*b*"},
		{"italic star", "*i*", "_i_"},
		{"italic underscore", "_i_", "_i_"},
		{"strike", "~~s~~", "~s~"},
		{"bold touching word gets markdown.ZWSP", "x**b**y", "x" + markdown.ZWSP + "*b*" + markdown.ZWSP + "y"},
		{"link with label", "[l](https://e.com)", "l (https://e.com)"},
		{"link label is url", "[https://e.com](https://e.com)", "https://e.com"},
		{"autolink", "<https://e.com/a?b=1&c=2>", "https://e.com/a?b=1&c=2"},
		{"bare url", "see https://e.com/x now", "see https://e.com/x now"},
		{"email autolink", "<a@b.com>", "a@b.com"},
		{"entities resolved, not escaped", "a &lt; b &amp; c > d", "a < b & c > d"},
		{"escaped star is a look-alike", `\*x\*`, "∗x∗"},
		{"heading is bold", "## Title", "*Title*"},
		{"no emphasis inside heading", "# a **b**", "*a b*"},
		{"bullet list", "- a\n- b", "- a\n- b"},
		{"ordered list", "3. a\n4. b", "3. a\n4. b"},
		{"code span", "`x`", "`x`"},
		{"code span with backtick", "`` a`b ``", "`aˋb`"},
		{"stray triple backtick in text", "a ``` b", "a ˋˋˋ b"},
		{"fence drops language", "```go\nx := 1\n```", "```\nx := 1\n```"},
		{"fence line inside code defused", "    ```\n    x", "```\nˋˋˋ\nx\n```"},
		{"quote keeps code block lines", "> ```\n> x\n> ```", "```\nx\n```"},
		{"table is monospace", "| a | b |\n|---|---|\n| 1 | 22 |", "```\na | b\n--+---\n1 | 22\n```"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := toWhatsApp(tt.in); got != tt.want {
				t.Errorf("toWhatsApp(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
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
		if line == codeFence {
			fences++
		}
	}
	if fences%2 != 0 {
		tb.Fatalf("unbalanced ``` lines (%d) in %q", fences, s)
	}
	if n := strings.Count(s, codeFence); n != fences && !strings.Contains(s, "````") {
		tb.Fatalf("``` outside fence lines (%d of %d) in %q", n-fences, n, s)
	}
}

// FuzzSplitText renders arbitrary Markdown and splits it: every chunk is
// within the limit, not blank, and has balanced ``` blocks.
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
		for _, c := range splitText(toWhatsApp(md), limit) {
			checkChunk(t, c, limit)
		}
	})
}
