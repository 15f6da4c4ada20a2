package slack

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentbridge/agentbridge/bridges/adapters/markdown"
	"github.com/agentbridge/agentbridge/bridges/adapters/markdown/markdowntest"
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

func TestConvertSlackText(t *testing.T) {
	names := map[string]string{"U2": "Bea"}
	lookup := func(id string) string {
		if n, ok := names[id]; ok {
			return n
		}
		return id
	}
	tests := []struct{ name, in, want string }{
		{"mention stripped", "<@UBOT> do it", "do it"},
		{"mention with label stripped", "<@UBOT|bot> do it", "do it"},
		{"mention in the middle", "please <@UBOT> do it", "please do it"},
		{"other user resolved", "ask <@U2> about it", "ask @Bea about it"},
		{"other user with label", "ask <@U3|carl>", "ask @carl"},
		{"unknown user stays id", "ask <@U4>", "ask @U4"},
		{"channel", "see <#C1|general>", "see #general"},
		{"special", "<!here> look", "@here look"},
		{"subteam", "<!subteam^S1|@devs> look", "@devs look"},
		{"link with label", "<https://e.com/a?b=1&amp;c=2|the page>", "[the page](https://e.com/a?b=1&c=2)"},
		{"bare link", "<https://e.com>", "https://e.com"},
		{"auto-linked domain", "<http://e.com|e.com>", "e.com"},
		{"mailto", "<mailto:a@e.com|a@e.com>", "a@e.com"},
		{"entities", "a &lt; b &amp;&amp; c &gt; d", "a < b && c > d"},
		{"escaped entity stays", "&amp;lt;", "&lt;"},
		{"unbalanced", "x < y", "x < y"},
		{"multiline kept", "<@UBOT>\nline1\n  line2", "line1\n  line2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := convertSlackText(tt.in, "UBOT", lookup); got != tt.want {
				t.Errorf("convertSlackText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzConvertSlackText(f *testing.F) {
	for _, s := range []string{"<@UBOT> hi", "<https://e.com|x>", "&amp;lt;", "<<@UBOT>>", "<!here|@here>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := convertSlackText(s, "UBOT", nil) // must not panic
		if !utf8.ValidString(out) && utf8.ValidString(s) {
			t.Fatalf("invalid UTF-8 from %q", s)
		}
		// A leading bot mention is removed without a trace.
		if !strings.ContainsAny(s, "<>") {
			if with, without := convertSlackText("<@UBOT> "+s, "UBOT", nil), convertSlackText(s, "UBOT", nil); with != without {
				t.Fatalf("mention left a trace: %q vs %q", with, without)
			}
		}
	})
}
