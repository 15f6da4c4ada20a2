package policy

import (
	"errors"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// bashPattern is the match of a Bash rule: one simple command written as
// shell words, each word a glob over one word of the command (see
// docs/rules.md).
type bashPattern struct {
	any     bool        // empty match: every command
	assigns []patAssign // NAME=glob words before the command name
	name    string      // glob over the command name; "" for an assignment-only pattern
	flags   []string    // globs over single flags: "-r", "--force", "--format=*"
	pos     []string    // globs over the positional words, in order
	rest    bool        // a final * word: any further arguments
}

type patAssign struct{ name, value string } // value is a glob

// CheckBashPattern reports why match cannot be the match of a Bash rule,
// or nil. Load checks the rules of the config file with it; code that
// builds rules (per-conversation grants) should too: a rule whose pattern
// does not compile matches nothing. A simple command written literally
// (git push origin main) is a valid pattern that matches itself.
func CheckBashPattern(match string) error {
	_, err := compileBashPattern(match)
	return err
}

// compileBashPattern parses the match of a Bash rule.
func compileBashPattern(match string) (*bashPattern, error) {
	if match == "" {
		return &bashPattern{any: true}, nil
	}
	s, err := patternStmt(match)
	if err != nil {
		return nil, err
	}
	p := &bashPattern{}
	var words []patWord
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		if p.assigns, words, err = callPattern(c); err != nil {
			return nil, err
		}
	case *syntax.DeclClause:
		if words, err = declPattern(c); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("must be one simple command (no |, &&, ||, subshell, group or keyword)")
	}
	if len(words) == 0 {
		return p, nil // NAME=glob alone
	}
	if err := p.setWords(words); err != nil {
		return nil, err
	}
	return p, nil
}

// patternStmt parses match (not empty) as the one simple statement a
// pattern must be: no list, comment, !, &, coprocess or redirection.
func patternStmt(match string) (*syntax.Stmt, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(strings.NewReader(match), "")
	if err != nil {
		return nil, fmt.Errorf("does not parse as a shell command: %v", err)
	}
	if len(f.Stmts) == 0 {
		return nil, errors.New("is blank; leave match out to match every command")
	}
	if len(f.Stmts) > 1 || len(f.Last) > 0 || len(f.Stmts[0].Comments) > 0 {
		return nil, errors.New("must be one simple command (no ;, newline or comment)")
	}
	s := f.Stmts[0]
	if s.Negated || s.Background || s.Coprocess || len(s.Redirs) > 0 {
		return nil, errors.New("must be one simple command without !, & or redirections")
	}
	return s, nil
}

// callPattern gives a simple command's NAME=glob assignments and its
// words (the command name first).
func callPattern(c *syntax.CallExpr) ([]patAssign, []patWord, error) {
	var assigns []patAssign
	var words []patWord
	for _, as := range c.Assigns {
		if as.Append || as.Index != nil || as.Array != nil || as.Name == nil {
			return nil, nil, errors.New("assignments must have the form NAME=glob")
		}
		v := ""
		if as.Value != nil {
			w, err := patternWord(as.Value)
			if err != nil {
				return nil, nil, err
			}
			v = w.glob
		}
		assigns = append(assigns, patAssign{name: as.Name.Value, value: v})
	}
	for _, w := range c.Args {
		pw, err := patternWord(w)
		if err != nil {
			return nil, nil, err
		}
		words = append(words, pw)
	}
	return assigns, words, nil
}

// declPattern gives the words of a declaration (export, declare, local,
// readonly…): its keyword, then each argument, NAME=glob as one word.
func declPattern(c *syntax.DeclClause) ([]patWord, error) {
	var err error
	words := []patWord{{glob: c.Variant.Value}}
	for _, as := range c.Args {
		switch {
		case as.Naked && as.Name != nil:
			words = append(words, patWord{glob: globQuote(as.Name.Value)})
		case as.Naked && as.Value != nil:
			pw, err := patternWord(as.Value)
			if err != nil {
				return nil, err
			}
			words = append(words, pw)
		case as.Name != nil && as.Index == nil && as.Array == nil && !as.Append:
			v := patWord{}
			if as.Value != nil {
				if v, err = patternWord(as.Value); err != nil {
					return nil, err
				}
			}
			words = append(words, patWord{glob: globQuote(as.Name.Value+"=") + v.glob})
		default:
			return nil, errors.New("assignments must have the form NAME=glob")
		}
	}
	return words, nil
}

// setWords checks the globs of words (at least one) and sorts them into
// p: the command name, the flags (short flags literal, each letter its
// own flag), the positional words (all of them after --) and a final *.
func (p *bashPattern) setWords(words []patWord) error {
	for _, w := range words {
		if err := CheckGlob(w.glob); err != nil {
			return fmt.Errorf("word %q: %v", w.glob, err)
		}
	}
	p.name = words[0].glob
	words = words[1:]
	if n := len(words); n > 0 && words[n-1].star {
		p.rest = true
		words = words[:n-1]
	} else if n == 0 && p.name == "*" {
		p.rest = true // "*" alone: any command
	}
	endOpts := false
	for _, w := range words {
		lit, isLit := globLiteral(w.glob)
		prefix := globPrefix(w.glob)
		switch {
		case endOpts:
			p.pos = append(p.pos, w.glob)
		case isLit && lit == "--":
			endOpts = true
			p.pos = append(p.pos, w.glob)
		case strings.HasPrefix(prefix, "--"):
			p.flags = append(p.flags, w.glob)
		case strings.HasPrefix(prefix, "-") && w.glob != "-":
			if !isLit {
				return fmt.Errorf("flag %q: short flags must be literal (write -r -f, not -[rf])", w.glob)
			}
			for _, e := range flagElems(lit) {
				p.flags = append(p.flags, globQuote(e))
			}
		default:
			p.pos = append(p.pos, w.glob)
		}
	}
	return nil
}

// patWord is one word of a pattern as a glob.
type patWord struct {
	glob string
	star bool // the word is an unquoted "*"
}

// patternWord converts a pattern word to a glob: unquoted text keeps its
// glob meaning (and its backslash escapes), quoted text is literal.
func patternWord(w *syntax.Word) (patWord, error) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return patWord{}, errors.New("$'…' quoting is not supported in patterns")
			}
			b.WriteString(globQuote(p.Value))
		case *syntax.DblQuoted:
			if p.Dollar {
				return patWord{}, errors.New(`$"…" quoting is not supported in patterns`)
			}
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return patWord{}, errors.New("patterns must be literal words (no $, `…` or $(…))")
				}
				b.WriteString(globQuote(unescapeDbl(l.Value)))
			}
		case *syntax.ExtGlob:
			return patWord{}, errors.New("extended globs such as *(…) are not supported")
		default:
			return patWord{}, errors.New("patterns must be literal words (no $, `…` or $(…))")
		}
	}
	l, bare := w.Parts[0].(*syntax.Lit)
	return patWord{glob: b.String(), star: bare && len(w.Parts) == 1 && l.Value == "*"}, nil
}

// globQuote escapes s so that it matches itself as a glob.
func globQuote(s string) string {
	if !strings.ContainsAny(s, `*?[\`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// globLiteral returns the text a glob matches when it has no wildcard.
func globLiteral(g string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(g); i++ {
		switch g[i] {
		case '*', '?', '[':
			return "", false
		case '\\':
			i++
			if i >= len(g) {
				return "", false
			}
		}
		b.WriteByte(g[i])
	}
	return b.String(), true
}

// globPrefix returns the literal text at the start of a glob.
func globPrefix(g string) string {
	var b strings.Builder
	for i := 0; i < len(g); i++ {
		switch g[i] {
		case '*', '?', '[':
			return b.String()
		case '\\':
			i++
			if i >= len(g) {
				return b.String()
			}
		}
		b.WriteByte(g[i])
	}
	return b.String()
}

// flagElems splits a flag word: "--x=y" is one element, "-rf" is "-r" and "-f".
func flagElems(w string) []string {
	if strings.HasPrefix(w, "--") {
		return []string{w}
	}
	out := make([]string, 0, len(w)-1)
	for _, r := range w[1:] {
		out = append(out, "-"+string(r))
	}
	return out
}
