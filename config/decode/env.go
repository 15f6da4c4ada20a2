package decode

import (
	"fmt"
	"strings"
)

// expandEnv expands environment references in one scalar value:
//
//	${VAR}           the value of VAR; an error if VAR is unset
//	${VAR:-default}  the value of VAR, or default if VAR is unset or empty
//	$$               a literal "$"
//
// Any other "$" is kept literally. VAR must match [A-Za-z_][A-Za-z0-9_]*;
// the default is taken verbatim up to the first "}" and is not expanded
// itself. changed reports whether any reference was replaced (so the
// result must be treated as possibly secret). Error messages name the
// variables but never contain their values.
func expandEnv(s string, lookup func(string) (string, bool)) (out string, changed bool, errs []string) {
	if !strings.Contains(s, "$") {
		return s, false, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' || i+1 >= len(s) || (s[i+1] != '$' && s[i+1] != '{') {
			b.WriteByte(c)
			i++
			continue
		}
		if s[i+1] == '$' {
			b.WriteByte('$')
			i += 2
			continue
		}
		// s[i:] starts with "${".
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			errs = append(errs, `unterminated "${" (write "$$" for a literal "$")`)
			b.WriteString(s[i:])
			break
		}
		ref := s[i+2 : i+2+end]
		i += 2 + end + 1
		name, def, hasDef := strings.Cut(ref, ":-")
		if !ValidEnvName(name) {
			errs = append(errs, fmt.Sprintf("bad environment variable name %q in ${...}", name))
			continue
		}
		changed = true
		val, ok := lookup(name)
		switch {
		case hasDef && (!ok || val == ""):
			b.WriteString(def)
		case !ok:
			errs = append(errs, fmt.Sprintf("environment variable %s is not set (write ${%s:-default} to make it optional)", name, name))
		default:
			b.WriteString(val)
		}
	}
	return b.String(), changed, errs
}

// ValidEnvName reports whether name is a portable environment variable name.
func ValidEnvName(name string) bool {
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
