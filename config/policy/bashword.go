package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Words of a command as the policy sees them: quote removal for what is
// static; expansions, substitutions, unquoted globs and brace expansions
// make a word dynamic.

// litWord is the static word s.
func litWord(s string) shWord {
	return shWord{text: s, prefix: s, src: s, static: true}
}

// word converts a word: quote removal for what is static; expansions,
// substitutions, unquoted globs and brace expansions make it dynamic.
func (a *analyzer) word(w *syntax.Word) shWord {
	out := shWord{src: a.source(w), static: true}
	var text strings.Builder
	dynamic := func(multi bool) {
		if out.static {
			out.prefix = text.String()
		}
		out.static = false
		out.multi = out.multi || multi
	}
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			s, glob := unescapeLit(p.Value)
			if glob {
				dynamic(true)
			}
			text.WriteString(s)
		case *syntax.SglQuoted:
			if p.Dollar { // $'…' escapes: not decoded here
				dynamic(false)
			}
			text.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				dynamic(false)
			}
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					text.WriteString(unescapeDbl(l.Value))
				} else {
					dynamic(false)
				}
			}
		default: // parameter, command, arithmetic, process substitution, extglob
			dynamic(true)
		}
	}
	if out.static && braceExpands(w) {
		dynamic(true)
	}
	if out.static {
		out.text = text.String()
		out.prefix = out.text
	}
	return out
}

// unescapeLit removes the backslashes of an unquoted literal and reports
// whether it holds an unquoted glob (*, ? or […]).
func unescapeLit(s string) (string, bool) {
	if !strings.ContainsAny(s, `\*?[`) {
		return s, false
	}
	var b strings.Builder
	glob, class := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
			continue
		case c == '*' || c == '?':
			glob = true
		case c == '[':
			class = true
		case c == ']' && class:
			glob = true
		}
		b.WriteByte(c)
	}
	return b.String(), glob
}

// unescapeDbl removes the backslashes that escape a character inside
// double quotes ($ ` " \ and newline).
func unescapeDbl(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// braceExpands reports whether Bash may brace-expand w: an unquoted '{'
// followed by an unquoted ',' or ".." and an unquoted '}' in its literal
// parts. It errs on the side of yes.
func braceExpands(w *syntax.Word) bool {
	open, sep := false, false
	for _, part := range w.Parts {
		l, ok := part.(*syntax.Lit)
		if !ok {
			continue
		}
		s := l.Value
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '{':
				open, sep = true, false
			case ',':
				sep = sep || open
			case '.':
				if open && i+1 < len(s) && s[i+1] == '.' {
					sep = true
				}
			case '}':
				if open && sep {
					return true
				}
			}
		}
	}
	return false
}

// validEnvName reports whether name is a portable environment variable
// name (a shell variable name): letters, digits and '_', not starting
// with a digit. Package config has the same check for agents.*.env keys.
func validEnvName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
