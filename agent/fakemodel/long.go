package fakemodel

import (
	"fmt"
	"strings"
)

// longCodeThreshold is the [long N] size from which the reply's code block
// is longer than longCodeMin characters.
const (
	longCodeThreshold = 4000
	longCodeMin       = 2100
)

// longText returns a deterministic Markdown text of about n characters
// (within a few percent for n >= 200): numbered paragraphs separated by
// blank lines and, for n >= 400, one fenced ```go block. For n >= 4000 the
// code block alone is longer than 2000 characters, so a chat splitter has to
// cut inside it.
func longText(n int) string {
	codeLen := 0
	switch {
	case n >= longCodeThreshold:
		codeLen = max(longCodeMin, n*2/5)
	case n >= 400:
		codeLen = n / 4
	}
	proseLen := n - codeLen
	var b strings.Builder
	b.Grow(n + 200)
	writeProse(&b, proseLen/2, 1)
	if codeLen > 0 {
		writeGoBlock(&b, codeLen)
	}
	writeProse(&b, n-b.Len(), 100)
	out := b.String()
	if len(out) > n && n < 200 {
		out = out[:n]
	}
	return strings.TrimRight(out, "\n ")
}

// writeProse appends paragraphs totalling about n characters. Paragraph
// numbers start at first so the two prose parts are distinguishable.
func writeProse(b *strings.Builder, n, first int) {
	const sentence = "The quick brown fox jumps over the lazy dog while the bridge keeps every message in order. "
	written := 0
	for p := first; written < n; p++ {
		para := fmt.Sprintf("Paragraph %d. ", p)
		for len(para) < 300 && written+len(para) < n {
			para += sentence
		}
		para = strings.TrimSpace(para) + "\n\n"
		b.WriteString(para)
		written += len(para)
	}
}

// writeGoBlock appends a fenced Go code block of about n characters.
func writeGoBlock(b *strings.Builder, n int) {
	const head = "```go\npackage main\n\nimport \"fmt\"\n\nfunc main() {\n"
	const tail = "}\n```\n\n"
	b.WriteString(head)
	written := len(head) + len(tail)
	for i := 1; written < n; i++ {
		line := fmt.Sprintf("\tfmt.Println(\"line %03d: the quick brown fox jumps over the lazy dog\")\n", i)
		b.WriteString(line)
		written += len(line)
	}
	b.WriteString(tail)
}
