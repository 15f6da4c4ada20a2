package markdown

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// Dialect is how one chat format writes what CommonMark says: the walker
// (Render) visits the document once for every format and asks the dialect
// for the markers and the escaping. Every func field is required unless
// its comment says otherwise.
type Dialect struct {
	// Bold, Italic and Strike are the markers written on both sides of
	// emphasis (see WrapEmphasis), e.g. "*", "_", "~".
	Bold, Italic, Strike string
	// Heading writes a heading line from its text (rendered without
	// emphasis markers, trimmed, never empty) and its level 1…6.
	Heading func(level int, text string) string
	// Rule is the line that replaces a thematic break.
	Rule string
	// Bullet is the marker of an unordered list item at a nesting depth
	// (1…), followed by its space: "• ", "- ".
	Bullet func(depth int) string
	// Text writes a text segment as found in the source: it resolves
	// backslash escapes and entity references and escapes the result for
	// the format.
	Text func(v []byte) string
	// Verbatim writes text the author wrote literally: code spans and the
	// parser's raw strings.
	Verbatim func(v []byte) string
	// CodeLine writes one line (with its newline) of a code block; the
	// walker writes the ``` lines around the block itself.
	CodeLine func(line []byte) string
	// RawHTML writes HTML found in the source (blocks and inline tags other
	// than <br>), shown as text.
	RawHTML func(html []byte) string
	// Link writes a link or an image: dest is the destination as found in
	// the source, label the rendered label (no emphasis markers; "" when
	// there is none).
	Link func(dest []byte, label string) string
	// AutoLink writes <url>, a bare URL or an e-mail address (email true):
	// url is the link target as written, label its text.
	AutoLink func(url, label string, email bool) string
	// Cell post-processes the rendered text of a table cell (newlines are
	// already spaces). Optional.
	Cell func(cell string) string
	// Width is how many columns a rendered cell takes in the monospace
	// table. Optional: the number of runes.
	Width func(cell string) int
	// KeepFences says that the format's monospace runs from one ``` line
	// to the next, whatever is in front of it: the lines of a ``` block
	// are then never prefixed by a quote or list indentation, and a list
	// item that starts with a block puts the fence on its own line.
	KeepFences bool
}

// CodeFence is the line that opens and closes a monospace block; Render
// writes it alone on its line.
const CodeFence = "```"

// Render converts CommonMark (with the GitHub extensions for tables,
// strikethrough, task lists and bare links) to the dialect's format:
//
//   - emphasis, strong and strikethrough → the dialect's markers, at word
//     boundaries (WrapEmphasis); none inside headings, link labels and
//     table cells
//   - headings → Dialect.Heading; thematic breaks → Dialect.Rule
//   - lists → Dialect.Bullet or "1. " markers, nested items and item
//     continuations indented by four spaces; task boxes → ☑ / ☐
//   - block quotes → "> " lines (">" for blank ones)
//   - inline code → `code` (a backtick inside becomes a look-alike: chat
//     formats have no double-backtick spans); fenced and indented code →
//     a ``` block without the language
//   - tables → a ``` block of aligned columns with a "-+-" rule under the
//     header
//   - links → Dialect.Link / Dialect.AutoLink; <br> → a newline
//
// Blocks are separated by a blank line. The result has no trailing
// newline or space. Render never fails: input that is not valid Markdown
// is rendered as text. It holds no state between calls and is safe for
// concurrent use.
func Render(md string, d *Dialect) string {
	src := []byte(md)
	doc := gfmParser().Parse(text.NewReader(src))
	w := &walker{src: src, d: d}
	return strings.TrimRight(w.blocks(doc, "\n\n"), "\n ")
}

// gfmParser is the CommonMark parser with the GitHub extensions Render
// reads, built at its first use and then only read: goldmark's parsers
// keep no state between documents (each Parse has its own context), so
// concurrent Renders share it. Building one per call was most of the
// cost of rendering a short reply.
var gfmParser = sync.OnceValue(func() parser.Parser {
	return goldmark.New(goldmark.WithExtensions(
		extension.Strikethrough,
		extension.Table,
		extension.TaskList,
		extension.Linkify,
	)).Parser()
})

// walker renders one document.
type walker struct {
	src       []byte
	d         *Dialect
	listDepth int
	plain     int // > 0: emit no emphasis markers (headings, link labels, table cells)
}

// blocks renders the block children of n joined by sep.
func (w *walker) blocks(n ast.Node, sep string) string {
	var parts []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if s := w.block(c); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, sep)
}

func (w *walker) block(n ast.Node) string {
	switch n := n.(type) {
	case *ast.Paragraph, *ast.TextBlock:
		return w.inlines(n)
	case *ast.Heading:
		w.plain++
		s := strings.TrimSpace(w.inlines(n))
		w.plain--
		if s == "" {
			return ""
		}
		return w.d.Heading(n.Level, s)
	case *ast.ThematicBreak:
		return w.d.Rule
	case *ast.FencedCodeBlock:
		return w.code(n)
	case *ast.CodeBlock:
		return w.code(n)
	case *ast.Blockquote:
		return w.prefixLines(w.blocks(n, "\n\n"), 0, func(l string) string {
			if l == "" {
				return ">"
			}
			return "> " + l
		})
	case *ast.List:
		return w.list(n)
	case *ast.HTMLBlock:
		var b strings.Builder
		lines := n.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			b.WriteString(w.d.RawHTML(seg.Value(w.src)))
		}
		if n.HasClosure() {
			b.WriteString(w.d.RawHTML(n.ClosureLine.Value(w.src)))
		}
		return strings.TrimRight(b.String(), "\n")
	case *east.Table:
		return w.table(n)
	default:
		if n.Type() == ast.TypeInline {
			var b strings.Builder
			w.inline(&b, n)
			return b.String()
		}
		return w.blocks(n, "\n\n")
	}
}

// code renders an indented or fenced code block as a ``` block.
func (w *walker) code(n ast.Node) string {
	var b strings.Builder
	b.WriteString(CodeFence + "\n")
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.WriteString(w.d.CodeLine(seg.Value(w.src)))
	}
	s := b.String()
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s + CodeFence
}

// prefixLines applies prefix to the lines of s from the from-th on. With
// Dialect.KeepFences the lines of ``` blocks, fences included, are left as
// they are.
func (w *walker) prefixLines(s string, from int, prefix func(string) string) string {
	lines := strings.Split(s, "\n")
	inCode := false
	for i, l := range lines {
		if w.d.KeepFences && l == CodeFence {
			inCode = !inCode
			continue
		}
		if i >= from && !inCode {
			lines[i] = prefix(l)
		}
	}
	return strings.Join(lines, "\n")
}

func (w *walker) list(n *ast.List) string {
	w.listDepth++
	defer func() { w.listDepth-- }()
	num := n.Start
	if num == 0 {
		num = 1
	}
	var items []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		marker := w.d.Bullet(w.listDepth)
		if n.IsOrdered() {
			marker = fmt.Sprintf("%d. ", num)
			num++
		}
		body := w.prefixLines(w.blocks(c, "\n"), 1, func(l string) string {
			if l == "" {
				return l
			}
			return "    " + l
		})
		if w.d.KeepFences && (body == CodeFence || strings.HasPrefix(body, CodeFence+"\n")) {
			marker = strings.TrimRight(marker, " ") + "\n" // the fence stays alone on its line
		}
		items = append(items, marker+body)
	}
	return strings.Join(items, "\n")
}

// table renders a GFM table as aligned monospace text in a ``` block.
func (w *walker) table(t *east.Table) string {
	var rows [][]string
	w.plain++
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			var b strings.Builder
			w.inline(&b, cell)
			c := strings.ReplaceAll(b.String(), "\n", " ")
			if w.d.Cell != nil {
				c = w.d.Cell(c)
			}
			cells = append(cells, c)
		}
		rows = append(rows, cells)
	}
	w.plain--
	width := w.d.Width
	if width == nil {
		width = utf8.RuneCountInString
	}
	var widths []int
	for _, row := range rows {
		for i, c := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], width(c))
		}
	}
	var b strings.Builder
	b.WriteString(CodeFence + "\n")
	for ri, row := range rows {
		for i, c := range row {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(c)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-width(c)))
			}
		}
		b.WriteString("\n")
		if ri == 0 {
			for i, wd := range widths {
				if i > 0 {
					b.WriteString("-+-")
				}
				b.WriteString(strings.Repeat("-", wd))
			}
			b.WriteString("\n")
		}
	}
	return b.String() + CodeFence
}

// inlines renders the inline children of a block.
func (w *walker) inlines(n ast.Node) string {
	var b strings.Builder
	w.children(&b, n)
	return strings.TrimRight(b.String(), "\n")
}

func (w *walker) children(b *strings.Builder, n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		w.inline(b, c)
	}
}

func (w *walker) inline(b *strings.Builder, n ast.Node) {
	switch n := n.(type) {
	case *ast.Text:
		b.WriteString(w.d.Text(n.Segment.Value(w.src)))
		if n.HardLineBreak() || n.SoftLineBreak() {
			b.WriteString("\n")
		}
	case *ast.String:
		if n.IsCode() || n.IsRaw() {
			b.WriteString(w.d.Verbatim(n.Value))
		} else {
			b.WriteString(w.d.Text(n.Value))
		}
	case *ast.CodeSpan:
		var code strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			var v []byte
			switch c := c.(type) {
			case *ast.Text:
				v = c.Segment.Value(w.src)
			case *ast.String:
				v = c.Value
			}
			if bytes.HasSuffix(v, []byte("\n")) {
				v = append(v[:len(v)-1:len(v)-1], ' ')
			}
			code.WriteString(w.d.Verbatim(v))
		}
		if code.Len() == 0 {
			return
		}
		// No double-backtick spans: a backtick inside would end the span
		// early, so show a look-alike.
		b.WriteString("`" + strings.ReplaceAll(code.String(), "`", "ˋ") + "`")
	case *ast.Emphasis:
		marker := w.d.Italic
		if n.Level >= 2 {
			marker = w.d.Bold
		}
		w.wrap(b, n, marker)
	case *east.Strikethrough:
		w.wrap(b, n, w.d.Strike)
	case *ast.Link:
		b.WriteString(w.d.Link(n.Destination, w.label(n)))
	case *ast.Image:
		b.WriteString(w.d.Link(n.Destination, w.label(n)))
	case *ast.AutoLink:
		b.WriteString(w.d.AutoLink(string(n.URL(w.src)), string(n.Label(w.src)), n.AutoLinkType == ast.AutoLinkEmail))
	case *ast.RawHTML:
		var raw []byte
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			raw = append(raw, seg.Value(w.src)...)
		}
		switch strings.ToLower(strings.ReplaceAll(string(raw), " ", "")) {
		case "<br>", "<br/>":
			b.WriteString("\n")
		default:
			b.WriteString(w.d.RawHTML(raw))
		}
	case *east.TaskCheckBox:
		if n.IsChecked {
			b.WriteString("☑ ")
		} else {
			b.WriteString("☐ ")
		}
	default:
		w.children(b, n)
	}
}

// label renders the children of a link or image without emphasis markers.
func (w *walker) label(n ast.Node) string {
	w.plain++
	var label strings.Builder
	w.children(&label, n)
	w.plain--
	return label.String()
}

// wrap renders n's children between two markers, keeping them at word
// boundaries (see WrapEmphasis). Empty content renders nothing.
func (w *walker) wrap(b *strings.Builder, n ast.Node, marker string) {
	var inner strings.Builder
	w.children(&inner, n)
	if w.plain > 0 {
		b.WriteString(inner.String())
		return
	}
	WrapEmphasis(b, inner.String(), marker, NextRune(n, w.src))
}
