package slack

import (
	"bufio"
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark/renderer/html"

	"github.com/agentbridge/agentbridge/bridges/adapters/markdown"
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
	return markdown.Render(md, &mrkdwn)
}

// mrkdwn is Slack's dialect for the shared Markdown walker.
var mrkdwn = markdown.Dialect{
	Bold:   "*",
	Italic: "_",
	Strike: "~",
	Heading: func(_ int, text string) string {
		return "*" + text + "*"
	},
	Rule:     "──────────",
	Bullet:   func(depth int) string { return bullet(depth) + " " },
	Text:     escapeText,
	Verbatim: escapeRaw,
	CodeLine: escapeRaw,
	RawHTML:  escapeRaw,
	Link: func(dest []byte, label string) string {
		var b strings.Builder
		writeLink(&b, resolveText(dest), label)
		return b.String()
	},
	AutoLink: func(url, label string, email bool) string {
		if email {
			if !strings.HasPrefix(strings.ToLower(url), "mailto:") {
				url = "mailto:" + url
			}
		} else if !strings.Contains(url, "://") {
			url = "http://" + url
		}
		var b strings.Builder
		writeLink(&b, url, escapeRaw([]byte(label)))
		return b.String()
	},
	Width: displayWidth,
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

// convertSlackText turns Slack event text into plain text: the bot's own
// mention (selfID) is removed, other <@U…> mentions become @name (name
// looks a user id up), <#C…|name> becomes #name, <!here> becomes @here,
// <url|label> becomes [label](url) and <url> the bare URL; &amp; &lt;
// &gt; are unescaped.
func convertSlackText(text, selfID string, name func(id string) string) string {
	var out strings.Builder
	for {
		lt := strings.IndexByte(text, '<')
		if lt < 0 {
			out.WriteString(unescape(text))
			break
		}
		gt := strings.IndexByte(text[lt:], '>')
		if gt < 0 {
			out.WriteString(unescape(text))
			break
		}
		// The innermost "<" before the ">" opens the sequence (Slack
		// escapes literal "<", so stray ones are just text).
		lt += strings.LastIndexByte(text[lt:lt+gt], '<')
		gt = strings.IndexByte(text[lt:], '>')
		out.WriteString(unescape(text[:lt]))
		inner := text[lt+1 : lt+gt]
		text = text[lt+gt+1:]
		target, label, hasLabel := strings.Cut(inner, "|")
		label = unescape(label)
		switch {
		case strings.HasPrefix(target, "@"):
			id := target[1:]
			if id == selfID {
				// Drop the mention and the space that separated it.
				if strings.HasPrefix(text, " ") && (out.Len() == 0 || strings.HasSuffix(out.String(), " ") || strings.HasSuffix(out.String(), "\n")) {
					text = text[1:]
				}
				continue
			}
			if hasLabel && label != "" {
				out.WriteString("@" + strings.TrimPrefix(label, "@"))
			} else if name != nil {
				out.WriteString("@" + name(id))
			} else {
				out.WriteString("@" + id)
			}
		case strings.HasPrefix(target, "#"):
			if hasLabel && label != "" {
				out.WriteString("#" + label)
			} else {
				out.WriteString(target)
			}
		case strings.HasPrefix(target, "!"):
			cmd := target[1:]
			switch {
			case hasLabel && label != "":
				out.WriteString(label)
			case cmd == "here" || cmd == "channel" || cmd == "everyone":
				out.WriteString("@" + cmd)
			default:
				out.WriteString(cmd)
			}
		default:
			url := unescape(target)
			plain := strings.TrimPrefix(url, "mailto:")
			switch {
			case !hasLabel || label == "" || label == url:
				out.WriteString(plain)
			case label == plain || strings.TrimPrefix(strings.TrimPrefix(url, "https://"), "http://") == label:
				out.WriteString(label)
			default:
				out.WriteString("[" + label + "](" + url + ")")
			}
		}
	}
	return strings.TrimSpace(out.String())
}

// unescape turns &amp; &lt; &gt; back into & < > (one pass: "&amp;lt;"
// becomes "&lt;").
func unescape(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '&' {
			switch {
			case strings.HasPrefix(s[i:], "&amp;"):
				b.WriteByte('&')
				i += len("&amp;") - 1
				continue
			case strings.HasPrefix(s[i:], "&lt;"):
				b.WriteByte('<')
				i += len("&lt;") - 1
				continue
			case strings.HasPrefix(s[i:], "&gt;"):
				b.WriteByte('>')
				i += len("&gt;") - 1
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
