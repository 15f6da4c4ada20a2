package policy

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// Rule actions accepted in agents.*.rules[].action.
const (
	ActionAllow = "allow"
	ActionDeny  = "deny"
	ActionAsk   = "ask"
)

// Rule is one permission policy entry (yaml agents.*.rules[]). Decide
// applies a list of rules to a permission request; the first rule that
// matches decides (for Bash: each simple command of the command line).
type Rule struct {
	// Tool is the tool name, e.g. "Bash", "Edit" or "mcp__github__*". It
	// is a glob (see Matches) and must not be empty.
	Tool string
	// Match is, for Bash, a command pattern written as shell words
	// (docs/rules.md; Decide parses both the command and the pattern). For
	// other tools it is a glob over the request's subject: the file path
	// for Read/Edit/Write, the URL for WebFetch (see Matches). Empty
	// matches any subject.
	Match string
	// Action is allow, deny or ask (ask = show the approval card).
	Action string
}

// Matches reports whether the rule's globs match tool and the subject as
// text. Decide uses it for every tool but Bash, whose commands are parsed
// instead: do not use Matches to decide Bash requests.
//
// Tool and Match are globs in the style of path.Match, with one
// difference: '*' matches any sequence of characters including '/' and
// spaces, so "rm -rf *" matches "rm -rf /tmp/x y". '?' matches one
// character, '[a-z]' / '[^a-z]' a character class, and '\' escapes the
// next character. A pattern must match the whole string. An empty Match
// matches every subject. A malformed pattern (rejected by Load) matches
// nothing.
func (r Rule) Matches(tool, subject string) bool {
	if !globMatch(r.Tool, tool) {
		return false
	}
	return r.Match == "" || globMatch(r.Match, subject)
}

var (
	errGlobClass  = errors.New(`unterminated character class "["`)
	errGlobEscape = errors.New(`pattern ends with "\"`)
	errGlobRange  = errors.New("bad character range in class")
)

// AppliesTo reports whether the rule's Tool glob matches tool, whatever
// its Match.
func (r Rule) AppliesTo(tool string) bool {
	return globMatch(r.Tool, tool)
}

// CheckGlob reports why pattern is not a well-formed Tool or Match glob
// (see Rule.Matches), or nil. Load checks the rules of the config file
// with it.
func CheckGlob(pattern string) error {
	for i := 0; i < len(pattern); {
		switch pattern[i] {
		case '\\':
			if i+1 >= len(pattern) {
				return errGlobEscape
			}
			_, w := utf8.DecodeRuneInString(pattern[i+1:])
			i += 1 + w
		case '[':
			_, n, err := matchClass(pattern[i:], 'a')
			if err != nil {
				return err
			}
			i += n
		default:
			i++
		}
	}
	return nil
}

// globMatch matches s against pattern (see Rule.Matches). It runs in
// O(len(pattern)*len(s)) using the classic single-backtrack algorithm:
// only the most recent '*' needs to be retried.
func globMatch(pattern, s string) bool {
	px, sx := 0, 0
	starPx, starSx := -1, 0
	for px < len(pattern) || sx < len(s) {
		if px < len(pattern) {
			switch c := pattern[px]; c {
			case '*':
				starPx, starSx = px, sx
				px++
				continue
			case '?':
				if sx < len(s) {
					_, w := utf8.DecodeRuneInString(s[sx:])
					px++
					sx += w
					continue
				}
			case '[':
				if sx < len(s) {
					r, w := utf8.DecodeRuneInString(s[sx:])
					ok, n, err := matchClass(pattern[px:], r)
					if err != nil {
						return false
					}
					if ok {
						px += n
						sx += w
						continue
					}
				}
			default:
				// A literal character (possibly escaped), compared byte
				// for byte so that invalid UTF-8 only matches itself.
				start := px
				if c == '\\' {
					if px+1 >= len(pattern) {
						return false
					}
					start++
				}
				_, w := utf8.DecodeRuneInString(pattern[start:])
				if lit := pattern[start : start+w]; strings.HasPrefix(s[sx:], lit) {
					px = start + w
					sx += w
					continue
				}
			}
		}
		// Mismatch: let the last '*' swallow one more character.
		if starPx < 0 || starSx >= len(s) {
			return false
		}
		_, w := utf8.DecodeRuneInString(s[starSx:])
		starSx += w
		px, sx = starPx+1, starSx
	}
	return true
}

// matchClass matches r against the character class at the start of
// pattern (which begins with '['). It returns whether r is in the class
// and the length of the class in bytes.
func matchClass(pattern string, r rune) (ok bool, n int, err error) {
	i := 1
	negate := false
	if i < len(pattern) && (pattern[i] == '^' || pattern[i] == '!') {
		negate = true
		i++
	}
	matched := false
	for first := true; ; first = false {
		if i >= len(pattern) {
			return false, 0, errGlobClass
		}
		if pattern[i] == ']' && !first {
			i++
			break
		}
		lo, w, err := classChar(pattern[i:])
		if err != nil {
			return false, 0, err
		}
		i += w
		hi := lo
		if i+1 < len(pattern) && pattern[i] == '-' && pattern[i+1] != ']' {
			hi, w, err = classChar(pattern[i+1:])
			if err != nil {
				return false, 0, err
			}
			if hi < lo {
				return false, 0, errGlobRange
			}
			i += 1 + w
		}
		if lo <= r && r <= hi {
			matched = true
		}
	}
	return matched != negate, i, nil
}

// classChar decodes one (possibly '\'-escaped) character of a class.
func classChar(s string) (r rune, n int, err error) {
	if s[0] == '\\' {
		if len(s) < 2 {
			return 0, 0, errGlobEscape
		}
		r, w := utf8.DecodeRuneInString(s[1:])
		return r, 1 + w, nil
	}
	r, w := utf8.DecodeRuneInString(s)
	return r, w, nil
}
