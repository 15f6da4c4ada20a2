package slack

import (
	"strings"
)

// redactor removes credentials from text that may be logged: the
// configured tokens, anything shaped like a Slack token (xoxb-…, xapp-…)
// and websocket tickets in URLs.
type redactor struct {
	secrets []string
}

func newRedactor(secrets ...string) redactor {
	var r redactor
	for _, s := range secrets {
		if s != "" {
			r.secrets = append(r.secrets, s)
		}
	}
	return r
}

// String redacts s.
func (r redactor) String(s string) string {
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, "[REDACTED]")
	}
	s = redactPrefixed(s, "xox", func(rest string) bool { return len(rest) > 1 && rest[1] == '-' })
	s = redactPrefixed(s, "xapp-", func(string) bool { return true })
	s = redactPrefixed(s, "ticket=", func(string) bool { return true })
	return s
}

// Err redacts an error's message ("" for nil).
func (r redactor) Err(err error) string {
	if err == nil {
		return ""
	}
	return r.String(err.Error())
}

// redactPrefixed replaces every token that starts with prefix (and passes
// ok on the text after the prefix) up to the next delimiter.
func redactPrefixed(s, prefix string, ok func(rest string) bool) string {
	var b strings.Builder
	for {
		i := strings.Index(s, prefix)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		rest := s[i+len(prefix):]
		if !ok(rest) {
			b.WriteString(s[:i+len(prefix)])
			s = rest
			continue
		}
		end := strings.IndexAny(rest, " \t\n\"'&<>,;)")
		if end < 0 {
			end = len(rest)
		}
		b.WriteString(s[:i+len(prefix)])
		b.WriteString("[REDACTED]")
		s = rest[end:]
	}
}
