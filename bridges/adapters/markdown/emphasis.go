package markdown

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
)

// Helpers shared by the chat formats (Slack mrkdwn, WhatsApp) whose
// emphasis markers (*bold*, _it_, ~strike~) only work at word boundaries
// and have no escape character.

// ZWSP is written between an emphasis marker and a letter or digit it
// would otherwise touch.
const ZWSP = "\u200b"

// WrapEmphasis writes content between two markers: spaces around the
// content move outside the markers, and a ZWSP separates a marker from a
// word character before it (the end of b) or after it (next, the first
// character following the emphasis; utf8.RuneError when none). Blank
// content is written as it is, without markers.
func WrapEmphasis(b *strings.Builder, content, marker string, next rune) {
	if strings.TrimSpace(content) == "" {
		b.WriteString(content)
		return
	}
	trimmed := strings.TrimLeft(content, " ")
	lead := content[:len(content)-len(trimmed)]
	core := strings.TrimRight(trimmed, " ")
	trail := trimmed[len(core):]
	b.WriteString(lead)
	if last, _ := utf8.DecodeLastRuneInString(b.String()); IsWordRune(last) {
		b.WriteString(ZWSP)
	}
	b.WriteString(marker + core + marker)
	b.WriteString(trail)
	if trail == "" && IsWordRune(next) {
		b.WriteString(ZWSP)
	}
}

// NextRune is the first character of the plain text that follows n in its
// paragraph (src is the document's source), or utf8.RuneError when what
// follows is not plain text.
func NextRune(n ast.Node, src []byte) rune {
	var v []byte
	switch t := n.NextSibling().(type) {
	case *ast.Text:
		v = t.Segment.Value(src)
	case *ast.String:
		v = t.Value
	default:
		return utf8.RuneError
	}
	c, _ := utf8.DecodeRune(v)
	return c
}

// IsWordRune reports whether c is a letter or a digit.
func IsWordRune(c rune) bool {
	return c != utf8.RuneError && (unicode.IsLetter(c) || unicode.IsDigit(c))
}

// LiteralMarkers replaces backslash-escaped formatting characters (\*, \_,
// \~, \`) with look-alikes: the author asked for the literal character and
// these formats have no escape, so the plain one could start formatting.
// Other backslash pairs are kept (for an HTML writer to resolve).
func LiteralMarkers(v []byte) []byte {
	if !strings.ContainsRune(string(v), '\\') {
		return v
	}
	out := make([]byte, 0, len(v)+8)
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' || i+1 == len(v) {
			out = append(out, v[i])
			continue
		}
		switch v[i+1] {
		case '*':
			out = append(out, "∗"...)
		case '_':
			out = append(out, "＿"...)
		case '~':
			out = append(out, "∼"...)
		case '`':
			out = append(out, "ˋ"...)
		default:
			out = append(out, v[i], v[i+1])
		}
		i++
	}
	return out
}
