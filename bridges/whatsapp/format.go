package whatsapp

import (
	"bufio"
	"bytes"
	"fmt"
	"html"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	ghtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"

	"github.com/agentbridge/agentbridge/bridges/markdown"
)

// toWhatsApp converts CommonMark (with the GitHub extensions for tables,
// strikethrough, task lists and bare links) to WhatsApp markup:
//
//   - **bold** → *bold*, _it_ / *it* → _it_, ~~strike~~ → ~strike~
//   - [label](url) → "label (url)"; <url>, bare URLs and a label equal to
//     its URL → the plain URL (WhatsApp links plain URLs by itself)
//   - headings → a *bold* line; lists → "- item" / "1. item", nested by
//     indent; block quotes → "> " lines; thematic breaks → a line of "─"
//   - inline code stays `code`; fenced and indented code → ``` blocks (the
//     language is dropped)
//   - tables → a ``` block with aligned columns
//
// Text is not escaped (WhatsApp has no entities). The result has no
// trailing newline. toWhatsApp never fails: input that is not valid
// Markdown is rendered as text.
func toWhatsApp(md string) string {
	src := []byte(md)
	doc := goldmark.New(goldmark.WithExtensions(
		extension.Strikethrough,
		extension.Table,
		extension.TaskList,
		extension.Linkify,
	)).Parser().Parse(text.NewReader(src))
	r := &waRenderer{src: src}
	return strings.TrimRight(r.blocks(doc, "\n\n"), "\n ")
}

type waRenderer struct {
	src       []byte
	listDepth int
	plain     int // > 0: emit no emphasis markers (headings, link labels, table cells)
}

// blocks renders the block children of n joined by sep.
func (r *waRenderer) blocks(n ast.Node, sep string) string {
	var parts []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if s := r.block(c); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, sep)
}

func (r *waRenderer) block(n ast.Node) string {
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
		return prefixLines(r.blocks(n, "\n\n"), 0, func(l string) string {
			if l == "" {
				return ">"
			}
			return "> " + l
		})
	case *ast.List:
		return r.list(n)
	case *ast.HTMLBlock:
		var b strings.Builder
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			b.WriteString(noFence(string(seg.Value(r.src))))
		}
		if n.HasClosure() {
			b.WriteString(noFence(string(n.ClosureLine.Value(r.src))))
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

// code renders an indented or fenced code block as a ``` block. A ``` in
// the code would close the block early: its line gets look-alikes.
func (r *waRenderer) code(n ast.Node) string {
	var b strings.Builder
	b.WriteString("```\n")
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.WriteString(defuseFence(string(seg.Value(r.src))))
	}
	s := b.String()
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s + "```"
}

// defuseFence replaces the backticks of a line that holds ``` with
// look-alikes.
func defuseFence(line string) string { return noFence(line) }

// codeFence is the line that opens and closes a monospace block; the
// renderer writes it alone on its line and nowhere else.
const codeFence = "```"

// prefixLines applies prefix to the lines of s from the from-th on,
// except the lines of ``` blocks: WhatsApp's monospace runs from one
// codeFence to the next, so the block's lines stay as they are and the
// fences stay alone on their lines (where markdown.Split sees them).
func prefixLines(s string, from int, prefix func(string) string) string {
	lines := strings.Split(s, "\n")
	inCode := false
	for i, l := range lines {
		if l == codeFence {
			inCode = !inCode
			continue
		}
		if i >= from && !inCode {
			lines[i] = prefix(l)
		}
	}
	return strings.Join(lines, "\n")
}

func (r *waRenderer) list(n *ast.List) string {
	r.listDepth++
	defer func() { r.listDepth-- }()
	num := n.Start
	if num == 0 {
		num = 1
	}
	var items []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		marker := "- "
		if n.IsOrdered() {
			marker = fmt.Sprintf("%d. ", num)
			num++
		}
		body := prefixLines(r.blocks(c, "\n"), 1, func(l string) string {
			if l == "" {
				return l
			}
			return "    " + l
		})
		if body == codeFence || strings.HasPrefix(body, codeFence+"\n") {
			marker = strings.TrimRight(marker, " ") + "\n" // the fence stays alone on its line
		}
		items = append(items, marker+body)
	}
	return strings.Join(items, "\n")
}

// table renders a GFM table as aligned monospace text in a ``` block.
func (r *waRenderer) table(t *east.Table) string {
	var rows [][]string
	r.plain++
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			var b strings.Builder
			r.inline(&b, cell)
			c := strings.ReplaceAll(b.String(), "\n", " ")
			cells = append(cells, strings.ReplaceAll(c, "```", "ˋˋˋ"))
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
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
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
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)))
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

// inlines renders the inline children of a block.
func (r *waRenderer) inlines(n ast.Node) string {
	var b strings.Builder
	r.children(&b, n)
	return strings.TrimRight(b.String(), "\n")
}

func (r *waRenderer) children(b *strings.Builder, n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inline(b, c)
	}
}

func (r *waRenderer) inline(b *strings.Builder, n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		b.WriteString(resolveText(n.Segment.Value(r.src)))
		if n.HardLineBreak() || n.SoftLineBreak() {
			b.WriteString("\n")
		}
	case *ast.String:
		if n.IsCode() || n.IsRaw() {
			b.Write(n.Value)
		} else {
			b.WriteString(resolveText(n.Value))
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
			code.Write(v)
		}
		if code.Len() == 0 {
			return
		}
		// No double-backtick spans: a backtick inside would end the span.
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
		r.link(b, n, resolveText(n.Destination))
	case *ast.Image:
		r.link(b, n, resolveText(n.Destination))
	case *ast.AutoLink:
		url := string(n.URL(r.src))
		if n.AutoLinkType == ast.AutoLinkEmail {
			url = strings.TrimPrefix(url, "mailto:")
		}
		b.WriteString(url)
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
			b.WriteString(noFence(string(raw)))
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

// link writes "label (dest)", or the bare destination when the label is
// empty or the destination itself.
func (r *waRenderer) link(b *strings.Builder, n ast.Node, dest string) {
	r.plain++
	var label strings.Builder
	r.children(&label, n)
	r.plain--
	dest = strings.TrimSpace(dest)
	l := strings.TrimSpace(strings.ReplaceAll(label.String(), "\n", " "))
	switch {
	case dest == "":
		b.WriteString(l)
	case l == "" || l == dest || "mailto:"+l == dest:
		b.WriteString(strings.TrimPrefix(dest, "mailto:"))
	default:
		b.WriteString(l + " (" + dest + ")")
	}
}

// wrap renders n's children between two markers, keeping them at word
// boundaries (see markdown.WrapEmphasis). Empty content renders nothing.
func (r *waRenderer) wrap(b *strings.Builder, n ast.Node, marker string) {
	var inner strings.Builder
	r.children(&inner, n)
	if r.plain > 0 {
		b.WriteString(inner.String())
		return
	}
	markdown.WrapEmphasis(b, inner.String(), marker, markdown.NextRune(n, r.src))
}

// resolveText resolves CommonMark backslash escapes and entity references
// in a text segment. Escaped formatting characters (\*, \_, \~, \`) become
// look-alikes: the author asked for the literal character and WhatsApp has
// no escape, so the plain one could start formatting.
func resolveText(v []byte) string {
	if !bytes.ContainsAny(v, "\\&\x00") {
		return noFence(string(v))
	}
	v = markdown.LiteralMarkers(v)
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	ghtml.DefaultWriter.Write(w, v) // resolves escapes and entities, escapes " & < >
	_ = w.Flush()
	return noFence(html.UnescapeString(buf.String()))
}

// noFence replaces the backticks of a ``` in text with look-alikes: only
// code blocks may open monospace.
func noFence(s string) string {
	if !strings.Contains(s, "```") {
		return s
	}
	return strings.ReplaceAll(s, "`", "ˋ")
}
