package whatsapp

import (
	"bufio"
	"bytes"
	"html"
	"strings"

	ghtml "github.com/yuin/goldmark/renderer/html"

	"github.com/agentbridge/agentbridge/bridges/adapters/markdown"
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
	return markdown.Render(md, &waMarkup)
}

// waMarkup is WhatsApp's dialect for the shared Markdown walker. Its
// monospace runs from one ``` to the next (KeepFences), and only code
// blocks may write a ```: elsewhere noFence defuses it.
var waMarkup = markdown.Dialect{
	Bold:   "*",
	Italic: "_",
	Strike: "~",
	Heading: func(_ int, text string) string {
		return "*" + text + "*"
	},
	Rule:     "──────────",
	Bullet:   func(int) string { return "- " },
	Text:     resolveText,
	Verbatim: func(v []byte) string { return string(v) },
	CodeLine: func(line []byte) string { return noFence(string(line)) },
	RawHTML:  func(html []byte) string { return noFence(string(html)) },
	Link: func(dest []byte, label string) string {
		return linkText(resolveText(dest), label)
	},
	AutoLink: func(url, _ string, email bool) string {
		if email {
			url = strings.TrimPrefix(url, "mailto:")
		}
		return url
	},
	Cell:       func(c string) string { return strings.ReplaceAll(c, "```", "ˋˋˋ") },
	KeepFences: true,
}

// linkText writes "label (dest)", or the bare destination when the label
// is empty or the destination itself.
func linkText(dest, label string) string {
	dest = strings.TrimSpace(dest)
	l := strings.TrimSpace(strings.ReplaceAll(label, "\n", " "))
	switch {
	case dest == "":
		return l
	case l == "" || l == dest || "mailto:"+l == dest:
		return strings.TrimPrefix(dest, "mailto:")
	default:
		return l + " (" + dest + ")"
	}
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
