package web

import (
	"bytes"
	"fmt"
	"html/template"
	"strings"
	"unicode/utf8"
)

// The bridge writes emoji as icons at the start of its notices and cards
// ("⚠️ …", "🔐 Bash wants to run"); without an emoji font they are empty
// boxes. In the agent's messages the console draws those it knows as its
// own SVG icons (templates/partials/icons.html, served as
// /static/icons/NAME.svg and drawn by a CSS mask in the text's colour),
// keeping the emoji itself as visually hidden text: screen readers, Copy
// and selections still have it. Emoji inside code are left alone, and so
// are all others (a person's 🙂 stays theirs).

// emojiIcons maps an emoji to the icon drawn for it.
var emojiIcons = map[rune]string{
	'⚠': "warning", '⛔': "blocked", '⏳': "clock", '⌛': "clock", '⏰': "clock",
	'✅': "check", '☑': "check", '✔': "check", '❌': "cross", '✗': "cross", '☐': "box",
	'🔐': "lock", '⏹': "stop", 'ℹ': "info", '❓': "question", '📎': "attach",
	'📄': "file", '📋': "file", '📜': "file", '👍': "thumbs-up", '👎': "thumbs-down",
	'🔄': "refresh", '🗓': "calendar", '🗑': "trash", '🧹': "trash",
}

// iconEmoji draws the known emoji of sanitised HTML (text outside tags,
// <code> and <pre>) as icons.
func iconEmoji(html string) string {
	if !strings.ContainsFunc(html, func(r rune) bool { _, ok := emojiIcons[r]; return ok }) {
		return html
	}
	var b strings.Builder
	code := 0 // open <code> and <pre> elements
	for i := 0; i < len(html); {
		if html[i] == '<' {
			end := strings.IndexByte(html[i:], '>')
			if end < 0 {
				b.WriteString(html[i:])
				break
			}
			tag := strings.ToLower(html[i : i+end+1])
			switch {
			case strings.HasPrefix(tag, "<code") || strings.HasPrefix(tag, "<pre"):
				code++
			case strings.HasPrefix(tag, "</code") || strings.HasPrefix(tag, "</pre"):
				code = max(0, code-1)
			}
			b.WriteString(html[i : i+end+1])
			i += end + 1
			continue
		}
		r, n := utf8.DecodeRuneInString(html[i:])
		name, ok := emojiIcons[r]
		if !ok || code > 0 {
			b.WriteString(html[i : i+n])
			i += n
			continue
		}
		if next, m := utf8.DecodeRuneInString(html[i+n:]); next == '\uFE0F' { // the emoji presentation selector
			n += m
		}
		fmt.Fprintf(&b, `<span class="emoji" data-icon="%s"><span class="visually-hidden">%s</span></span>`, name, html[i:i+n])
		i += n
	}
	return b.String()
}

// iconFiles renders each icon emojiIcons names as a standalone SVG file,
// by name, from the pages' "icon" template.
func iconFiles(pages map[string]*template.Template) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, name := range emojiIcons {
		if _, done := out[name]; done {
			continue
		}
		var buf bytes.Buffer
		if err := pages["chat"].ExecuteTemplate(&buf, "icon", name); err != nil {
			return nil, fmt.Errorf("icon %s: %w", name, err)
		}
		out[name] = buf.Bytes()
	}
	return out, nil
}
