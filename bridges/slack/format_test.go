package slack

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/markdown/markdowntest"

	"github.com/agentbridge/agentbridge/bridges/markdown"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden files")

// TestToMrkdwnGolden converts every testdata/mrkdwn/*.md file and compares
// the result with the .golden file next to it (go test -run Golden -update
// rewrites them).
func TestToMrkdwnGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "mrkdwn", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatal("no golden inputs found")
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".md")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			got := ToMrkdwn(string(src)) + "\n"
			markdowntest.Golden(t, in, got, *update)
		})
	}
}

func TestToMrkdwnInline(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"bold", "**b**", "*b*"},
		{"italic star", "*i*", "_i_"},
		{"strike", "~~s~~", "~s~"},
		{"bold touching word gets markdown.ZWSP", "x**b**y", "x" + markdown.ZWSP + "*b*" + markdown.ZWSP + "y"},
		{"link", "[l](https://e.com)", "<https://e.com|l>"},
		{"link same label", "[https://e.com](https://e.com)", "<https://e.com>"},
		{"link with ampersand", "[l](https://e.com/?a=1&b=2)", "<https://e.com/?a=1&amp;b=2|l>"},
		{"link pipe percent-encoded", "[l](https://e.com/a|b)", "<https://e.com/a%7Cb|l>"},
		{"heading", "# Hello *you*", "*Hello you*"},
		{"escape", "a<b & c>d", "a&lt;b &amp; c&gt;d"},
		{"entities resolved then escaped", "&lt;x&gt; &amp; &copy;", "&lt;x&gt; &amp; ©"},
		{"code span escaped", "`<@U1> & x`", "`&lt;@U1&gt; &amp; x`"},
		{"special mention neutralised", "<!channel>", "&lt;!channel&gt;"},
		{"fence language dropped", "```sh\nls <dir>\n```", "```\nls &lt;dir&gt;\n```"},
		{"bullet list", "- a\n- b", "• a\n• b"},
		{"ordered list start", "3. a\n4. b", "3. a\n4. b"},
		{"quote", "> q", "> q"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ToMrkdwn(tt.in); got != tt.want {
				t.Errorf("ToMrkdwn(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzToMrkdwn(f *testing.F) {
	for _, s := range []string{"**b**", "[l](u)", "```\ncode\n```", "| a | b |\n|---|---|\n| 1 | 2 |", "- a\n  - b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := ToMrkdwn(s)
		// Outside link/mention syntax we produced ourselves, no raw "<"
		// may survive: check that every "<" opens a link we wrote.
		for i := 0; i < len(out); i++ {
			if out[i] == '<' {
				end := strings.IndexByte(out[i:], '>')
				if end < 0 {
					t.Fatalf("unbalanced < in %q (from %q)", out, s)
				}
				inner := out[i+1 : i+end]
				if !hasScheme(inner) {
					t.Fatalf("raw < that is not a link in %q (from %q)", out, s)
				}
				i += end
			}
		}
	})
}

// BenchmarkToMrkdwn converts a typical agent answer (~2 KB).
func BenchmarkToMrkdwn(b *testing.B) {
	src, err := os.ReadFile(filepath.Join("testdata", "mrkdwn", "lists.md"))
	if err != nil {
		b.Fatal(err)
	}
	code, _ := os.ReadFile(filepath.Join("testdata", "mrkdwn", "code.md"))
	text := strings.Repeat(string(src)+"\n\n"+string(code)+"\n\n", 3)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		_ = ToMrkdwn(text)
	}
}
