package whatsapp

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/adapters/markdown/markdowntest"

	"github.com/agentbridge/agentbridge/bridges/adapters/markdown"
)

var update = flag.Bool("update", false, "rewrite testdata/*/*.golden from the current output")

// golden compares got with the .golden file next to the input in (or
// rewrites it with -update).
func golden(t *testing.T, in, got string) {
	t.Helper()
	markdowntest.Golden(t, in, got, *update)
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
