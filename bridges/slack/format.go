package slack

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"

	"github.com/agentbridge/agentbridge/bridges/markdown"
)

// bullet is the marker of an unordered list item at a nesting depth (1…).
func bullet(depth int) string {
	switch (depth - 1) % 3 {
	case 0:
		return "•"
	case 1:
		return "◦"
	default:
		return "▪"
	}
}

// ToMrkdwn converts CommonMark (with the GitHub extensions for tables,
// strikethrough, task lists and bare links) to Slack mrkdwn:
//
//   - **bold** → *bold*, _it_ / *it* → _it_, ~~strike~~ → ~strike~
//   - [label](url) → <url|label>, <url> and bare URLs → <url>
//   - headings → a *bold* line; lists → "• item" / "1. item", nested by indent
//   - block quotes → "> " lines; thematic breaks → a line of "─"
//   - inline code and fenced code are kept (the fence's language is dropped)
//   - tables → a monospace block with aligned columns
//   - &, < and > are escaped everywhere, code included: Slack stores and
//     renders message text in that escaped form (incoming events carry
//     "&lt;" inside backticks too), and an unescaped "<" would start a
//     link or a mention.
//
// The result has no trailing newline. ToMrkdwn never fails: input that is
// not valid Markdown is rendered as text.
func ToMrkdwn(md string) string {
	src := []byte(md)
	doc := newMarkdown().Parser().Parse(text.NewReader(src))
	r := &mrkdwnRenderer{src: src}
	return strings.TrimRight(r.blocks(doc, "\n\n"), "\n ")
}

// newMarkdown builds the parser (cheap; built per call so that the package
// holds no shared state).
func newMarkdown() goldmark.Markdown {
	return goldmark.New(goldmark.WithExtensions(
		extension.Strikethrough,
		extension.Table,
		extension.TaskList,
		extension.Linkify,
	))
}

type mrkdwnRenderer struct {
	src       []byte
	listDepth int
	plain     int // > 0: emit no emphasis markers (headings, link labels, table cells)
}

// blocks renders the block children of n joined by sep.
func (r *mrkdwnRenderer) blocks(n ast.Node, sep string) string {
	var parts []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		s := r.block(c)
		if s == "" {
			continue
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, sep)
}

func (r *mrkdwnRenderer) block(n ast.Node) string {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return r.inlines(n)
	case *ast.Heading:
		r.plain++
		s := strings.TrimSpace(r.inlines(n))
		r.plain--
		if s == "" {
			return ""
		}
		return "*" + s + "*"
	case *ast.ThematicBreak:
		return "──────────"
	case *ast.FencedCodeBlock:
		return r.code(n)
	case *ast.CodeBlock:
		return r.code(n)
	case *ast.Blockquote:
		inner := r.blocks(n, "\n\n")
		lines := strings.Split(inner, "\n")
		for i, l := range lines {
			if l == "" {
				lines[i] = ">"
			} else {
				lines[i] = "> " + l
			}
		}
		return strings.Join(lines, "\n")
	case *ast.List:
		return r.list(n)
	case *ast.HTMLBlock:
		var b strings.Builder
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			b.WriteString(escapeRaw(seg.Value(r.src)))
		}
		if n.HasClosure() {
			b.WriteString(escapeRaw(n.ClosureLine.Value(r.src)))
		}
		return strings.TrimRight(b.String(), "\n")
	case *east.Table:
		return r.table(n)
	default:
		if n.Type() == ast.TypeInline {
			var b strings.Builder
			r.inline(&b, n)
			return b.String()
		}
		return r.blocks(n, "\n\n")
	}
}

// code renders an indented or fenced code block as a ``` block.
func (r *mrkdwnRenderer) code(n ast.Node) string {
	var b strings.Builder
	b.WriteString("```\n")
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.WriteString(escapeRaw(seg.Value(r.src)))
	}
	s := b.String()
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s + "```"
}

func (r *mrkdwnRenderer) list(n *ast.List) string {
	r.listDepth++
	defer func() { r.listDepth-- }()
	num := n.Start
	if num == 0 {
		num = 1
	}
	var items []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		marker := bullet(r.listDepth) + " "
		if n.IsOrdered() {
			marker = fmt.Sprintf("%d. ", num)
			num++
		}
		body := r.blocks(c, "\n")
		lines := strings.Split(body, "\n")
		for i := 1; i < len(lines); i++ {
			if lines[i] != "" {
				lines[i] = "    " + lines[i]
			}
		}
		items = append(items, marker+strings.Join(lines, "\n"))
	}
	return strings.Join(items, "\n")
}

// table renders a GFM table as aligned monospace text.
func (r *mrkdwnRenderer) table(t *east.Table) string {
	var rows [][]string
	r.plain++
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			var b strings.Builder
			r.inline(&b, cell)
			cells = append(cells, strings.ReplaceAll(b.String(), "\n", " "))
		}
		rows = append(rows, cells)
	}
	r.plain--
	var widths []int
	for _, row := range rows {
		for i, c := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], displayWidth(c))
		}
	}
	var b strings.Builder
	b.WriteString("```\n")
	for ri, row := range rows {
		for i, c := range row {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(c)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-displayWidth(c)))
			}
		}
		b.WriteString("\n")
		if ri == 0 {
			for i, w := range widths {
				if i > 0 {
					b.WriteString("-+-")
				}
				b.WriteString(strings.Repeat("-", w))
			}
			b.WriteString("\n")
		}
	}
	return b.String() + "```"
}

// displayWidth counts runes, treating an escaped entity (&amp; &lt; &gt;)
// as the one character it shows.
func displayWidth(s string) int {
	n := utf8.RuneCountInString(s)
	for _, e := range []string{"&amp;", "&lt;", "&gt;"} {
		n -= 4 * strings.Count(s, e)
	}
	return n
}

// inlines renders the inline children of a block.
func (r *mrkdwnRenderer) inlines(n ast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inline(&b, c)
	}
	return strings.TrimRight(b.String(), "\n")
}

func (r *mrkdwnRenderer) children(b *strings.Builder, n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inline(b, c)
	}
}

func (r *mrkdwnRenderer) inline(b *strings.Builder, n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		b.WriteString(escapeText(n.Segment.Value(r.src)))
		if n.HardLineBreak() || n.SoftLineBreak() {
			b.WriteString("\n")
		}
	case *ast.String:
		if n.IsCode() || n.IsRaw() {
			b.WriteString(escapeRaw(n.Value))
		} else {
			b.WriteString(escapeText(n.Value))
		}
	case *ast.CodeSpan:
		var code strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			var v []byte
			switch c := c.(type) {
			case *ast.Text:
				v = c.Segment.Value(r.src)
			case *ast.String:
				v = c.Value
			}
			if bytes.HasSuffix(v, []byte("\n")) {
				v = append(v[:len(v)-1:len(v)-1], ' ')
			}
			code.WriteString(escapeRaw(v))
		}
		if code.Len() == 0 {
			return
		}
		// Slack has no double-backtick spans: a backtick inside would end
		// the span early, so show a look-alike.
		b.WriteString("`" + strings.ReplaceAll(code.String(), "`", "ˋ") + "`")
	case *ast.Emphasis:
		marker := "_"
		if n.Level >= 2 {
			marker = "*"
		}
		r.wrap(b, n, marker)
	case *east.Strikethrough:
		r.wrap(b, n, "~")
	case *ast.Link:
		r.plain++
		var label strings.Builder
		r.children(&label, n)
		r.plain--
		writeLink(b, resolveText(n.Destination), label.String())
	case *ast.Image:
		r.plain++
		var label strings.Builder
		r.children(&label, n)
		r.plain--
		writeLink(b, resolveText(n.Destination), label.String())
	case *ast.AutoLink:
		url := string(n.URL(r.src))
		label := string(n.Label(r.src))
		if n.AutoLinkType == ast.AutoLinkEmail {
			if !strings.HasPrefix(strings.ToLower(url), "mailto:") {
				url = "mailto:" + url
			}
		} else if !strings.Contains(url, "://") {
			url = "http://" + url
		}
		writeLink(b, url, escapeRaw([]byte(label)))
	case *ast.RawHTML:
		var raw []byte
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			raw = append(raw, seg.Value(r.src)...)
		}
		switch strings.ToLower(strings.ReplaceAll(string(raw), " ", "")) {
		case "<br>", "<br/>":
			b.WriteString("\n")
		default:
			b.WriteString(escapeRaw(raw))
		}
	case *east.TaskCheckBox:
		if n.IsChecked {
			b.WriteString("☑ ")
		} else {
			b.WriteString("☐ ")
		}
	default:
		r.children(b, n)
	}
}

// wrap renders n's children between two markers, keeping them at word
// boundaries (see markdown.WrapEmphasis). Empty content renders nothing.
func (r *mrkdwnRenderer) wrap(b *strings.Builder, n ast.Node, marker string) {
	var inner strings.Builder
	r.children(&inner, n)
	if r.plain > 0 {
		b.WriteString(inner.String())
		return
	}
	markdown.WrapEmphasis(b, inner.String(), marker, markdown.NextRune(n, r.src))
}

// writeLink writes <url|label>, or <url> when the label is the URL (or
// empty). label is already escaped mrkdwn. A destination that Slack would
// not link (no scheme) is written as "label (dest)".
func writeLink(b *strings.Builder, dest, label string) {
	dest = strings.TrimSpace(dest)
	if dest == "" {
		b.WriteString(label)
		return
	}
	if !hasScheme(dest) {
		if label == "" || label == escapeRaw([]byte(dest)) {
			b.WriteString(escapeRaw([]byte(dest)))
			return
		}
		b.WriteString(label + " (" + escapeRaw([]byte(dest)) + ")")
		return
	}
	u := linkURL(dest)
	label = strings.ReplaceAll(label, "\n", " ")
	if label == "" || label == u || label == escapeRaw([]byte(dest)) {
		b.WriteString("<" + u + ">")
		return
	}
	b.WriteString("<" + u + "|" + label + ">")
}

func hasScheme(u string) bool {
	i := strings.Index(u, ":")
	if i <= 0 {
		return false
	}
	for _, c := range u[:i] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// linkURL makes a URL safe inside <…|…>: characters that would end the
// link are percent-encoded and & becomes &amp; (Slack's own form).
func linkURL(u string) string {
	u = strings.NewReplacer("|", "%7C", "<", "%3C", ">", "%3E", " ", "%20", "\n", "").Replace(u)
	return strings.ReplaceAll(u, "&", "&amp;")
}

// escapeRaw escapes &, < and > in text taken verbatim (code).
func escapeRaw(v []byte) string {
	if !bytes.ContainsAny(v, "&<>") {
		return string(v)
	}
	var b strings.Builder
	b.Grow(len(v) + 16)
	for _, c := range v {
		switch c {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// escapeText resolves CommonMark backslash escapes and entity references
// in a text segment and escapes the result for mrkdwn.
func escapeText(v []byte) string {
	if !bytes.ContainsAny(v, "\\&\x00") {
		return escapeRaw(v) // nothing to resolve
	}
	v = markdown.LiteralMarkers(v)
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	html.DefaultWriter.Write(w, v) // resolves escapes and entities, escapes " & < >
	_ = w.Flush()
	return strings.ReplaceAll(buf.String(), "&quot;", `"`)
}

// resolveText resolves escapes and entities without escaping the result.
func resolveText(v []byte) string {
	return unescape(escapeText(v))
}
