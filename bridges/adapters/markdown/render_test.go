package markdown

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// testDialect marks every hook's output so that the tests see which hook
// wrote what.
func testDialect(keepFences bool) *Dialect {
	return &Dialect{
		Bold:       "B",
		Italic:     "I",
		Strike:     "S",
		Heading:    func(level int, text string) string { return fmt.Sprintf("H%d[%s]", level, text) },
		Rule:       "RULE",
		Bullet:     func(depth int) string { return fmt.Sprintf("b%d ", depth) },
		Text:       func(v []byte) string { return string(v) },
		Verbatim:   func(v []byte) string { return "v(" + string(v) + ")" },
		CodeLine:   func(line []byte) string { return "c:" + string(line) },
		RawHTML:    func(html []byte) string { return "r(" + string(html) + ")" },
		Link:       func(dest []byte, label string) string { return "L(" + label + "→" + string(dest) + ")" },
		AutoLink:   func(url, label string, email bool) string { return fmt.Sprintf("A(%s,%s,%v)", url, label, email) },
		Cell:       func(c string) string { return strings.ToUpper(c) },
		Width:      func(c string) int { return len(c) },
		KeepFences: keepFences,
	}
}

func TestRenderDialect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		keep     bool
		want     string
	}{
		{"emphasis", "**b** *i* ~~s~~", false, "BbB IiI SsS"},
		{"emphasis at word boundaries", "a**b**c", false, "a" + ZWSP + "BbB" + ZWSP + "c"},
		{"heading without markers", "### A **b** [l](u)", false, "H3[A b L(l→u)]"},
		{"rule", "a\n\n---\n\nb", false, "a\n\nRULE\n\nb"},
		{"nested bullets", "- a\n  - b\n1. c", false, "b1 a\n    b2 b\n\n1. c"},
		{"ordered start", "3. x\n4. y", false, "3. x\n4. y"},
		{"code span", "`x`y`", false, "`v(x)`y`"},
		{"code block", "```go\nx\n```", false, "```\nc:x\n```"},
		{"quote prefixes code", "> ```\n> x\n> ```", false, "> ```\n> c:x\n> ```"},
		{"quote keeps fences", "> ```\n> x\n> ```", true, "```\nc:x\n```"},
		{"list item keeps fence alone", "- ```\n  x\n  ```", true, "b1\n```\nc:x\n```"},
		{"list item fence inline", "- ```\n  x\n  ```", false, "b1 ```\n    c:x\n    ```"},
		{"table", "| a | bb |\n|---|---|\n| ccc | d |", false, "```\nA   | BB\n----+---\nCCC | D\n```"},
		{"autolink", "<https://x.y> and a@b.c", false, "A(https://x.y,https://x.y,false) and A(a@b.c,a@b.c,true)"},
		{"raw html", "a <b>c</b><br>d", false, "a r(<b>)cr(</b>)\nd"},
		{"task", "- [x] done\n- [ ] todo", false, "b1 ☑ done\nb1 ☐ todo"},
		{"image", "![alt](p.png)", false, "L(alt→p.png)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Render(tt.in, testDialect(tt.keep)); got != tt.want {
				t.Errorf("Render(%q) =\n%q\nwant\n%q", tt.in, got, tt.want)
			}
		})
	}
}

// TestRenderConcurrent: Renders share one parser (gfmParser); documents
// rendered at the same time come out as they do one at a time (run with
// -race to see the parser keep no state between them).
func TestRenderConcurrent(t *testing.T) {
	t.Parallel()
	docs := []string{
		"# T\n\n**b** *i* ~~s~~ `c` https://example.com",
		"- [ ] a\n- [x] b\n  1. c\n\n> q",
		"| a | b |\n|---|---|\n| 1 | 2 |",
		"```go\nx := 1\n```\n\n[l](u) <https://a.b>",
	}
	d := testDialect(false)
	want := make([]string, len(docs))
	for i, doc := range docs {
		want[i] = Render(doc, d)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				k := (g + i) % len(docs)
				if got := Render(docs[k], d); got != want[k] {
					t.Errorf("doc %d rendered concurrently: %q, alone: %q", k, got, want[k])
					return
				}
			}
		})
	}
	wg.Wait()
}
