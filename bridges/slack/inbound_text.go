package slack

import (
	"context"
	"strings"
)

// plainText turns Slack event text into the plain text the agent sees:
// the bot's own mention is removed, other <@U…> mentions become @name,
// <#C…|name> becomes #name, <!here> becomes @here, <url|label> becomes
// [label](url) and <url> the bare URL; &amp; &lt; &gt; are unescaped.
func (b *Bridge) plainText(ctx context.Context, text, selfID string) string {
	return convertSlackText(text, selfID, func(id string) string { return b.userName(ctx, id) })
}

// convertSlackText is plainText with the user lookup passed in.
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
