package config

import (
	"errors"
	"fmt"
	"path"
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
	p := &bashPattern{}
	var words []patWord
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		for _, as := range c.Assigns {
			if as.Append || as.Index != nil || as.Array != nil || as.Name == nil {
				return nil, errors.New("assignments must have the form NAME=glob")
			}
			v := ""
			if as.Value != nil {
				w, err := patternWord(as.Value)
				if err != nil {
					return nil, err
				}
				v = w.glob
			}
			p.assigns = append(p.assigns, patAssign{name: as.Name.Value, value: v})
		}
		for _, w := range c.Args {
			pw, err := patternWord(w)
			if err != nil {
				return nil, err
			}
			words = append(words, pw)
		}
	case *syntax.DeclClause:
		words = append(words, patWord{glob: c.Variant.Value})
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
	default:
		return nil, errors.New("must be one simple command (no |, &&, ||, subshell, group or keyword)")
	}
	if len(words) == 0 {
		return p, nil // NAME=glob alone
	}
	for _, w := range words {
		if err := checkGlob(w.glob); err != nil {
			return nil, fmt.Errorf("word %q: %v", w.glob, err)
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
				return nil, fmt.Errorf("flag %q: short flags must be literal (write -r -f, not -[rf])", w.glob)
			}
			for _, e := range flagElems(lit) {
				p.flags = append(p.flags, globQuote(e))
			}
		default:
			p.pos = append(p.pos, w.glob)
		}
	}
	return p, nil
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

// argKind is what a word after the command name is to the matcher.
type argKind uint8

const (
	argPos  argKind = iota // a positional word, "--" included
	argFlag                // a flag word before "--"
	argDyn                 // a word with an expansion: its words are unknown
)

type arg struct {
	kind      argKind
	text      string   // argPos: the word
	flags     []string // argFlag: its elements
	multi     bool     // argDyn: may be several words
	skippable bool     // argPos: "--", or right after a flag word (may be that flag's value)
	optsOpen  bool     // argDyn: before "--", so it may hold flags
}

// classify splits the arguments of a command into flags, positional words
// and dynamic words, the way the patterns see them.
func classify(words []shWord) []arg {
	out := make([]arg, 0, len(words))
	endOpts, afterFlag := false, false
	for _, w := range words {
		switch {
		case !w.static:
			out = append(out, arg{kind: argDyn, multi: w.multi, optsOpen: !endOpts})
			afterFlag = false
		case !endOpts && w.text == "--":
			endOpts = true
			out = append(out, arg{kind: argPos, text: w.text, skippable: true})
			afterFlag = false
		case !endOpts && len(w.text) >= 2 && w.text[0] == '-':
			out = append(out, arg{kind: argFlag, flags: flagElems(w.text)})
			afterFlag = !strings.Contains(w.text, "=")
		default:
			out = append(out, arg{kind: argPos, text: w.text, skippable: afterFlag})
			afterFlag = false
		}
	}
	return out
}

// allows reports whether the pattern allows c: c is surely one of the
// commands the pattern describes.
func (p *bashPattern) allows(c *shCmd) bool {
	if c.unknown != "" {
		return false
	}
	if p.any {
		return true
	}
	if c.writes != "" || !assignsEqual(p.assigns, c.assigns) {
		return false
	}
	if p.name == "" {
		return len(c.words) == 0
	}
	if len(c.words) == 0 || !c.words[0].static || !globMatch(p.name, c.words[0].text) {
		return false
	}
	args := c.classified()
	// The pattern's positional words come first, in order; flags among
	// them must be the pattern's. What follows is the rest.
	matched, tail := 0, len(args)
	for i, a := range args {
		if matched == len(p.pos) {
			tail = i
			break
		}
		switch a.kind {
		case argDyn:
			return false
		case argPos:
			if !globMatch(p.pos[matched], a.text) {
				return false
			}
			matched++
		case argFlag:
			for _, e := range a.flags {
				if !anyGlob(p.flags, e) {
					return false
				}
			}
		}
	}
	if matched < len(p.pos) {
		return false
	}
	for _, f := range p.flags {
		if !hasFlag(args, f) {
			return false
		}
	}
	if p.rest {
		return true
	}
	for _, a := range args[tail:] {
		if a.kind != argFlag {
			return false
		}
		for _, e := range a.flags {
			if !anyGlob(p.flags, e) {
				return false
			}
		}
	}
	return true
}

// mayMatch reports whether c may be one of the commands the pattern
// describes, for deny and ask rules: a dynamic word may be anything, a
// path to a program matches its base name, and a word after a flag may be
// that flag's value.
func (p *bashPattern) mayMatch(c *shCmd) bool {
	if p.any {
		return true
	}
	for _, pa := range p.assigns {
		if !hasAssign(c.assigns, pa, true) {
			return false
		}
	}
	if p.name == "" {
		return true // NAME=glob: any command given NAME
	}
	if len(c.words) == 0 {
		return false
	}
	args := c.classified()
	switch name := c.words[0]; {
	case !name.static:
		// Any program, but not any words: with an unquoted $CMD every
		// deny rule would match, and the command is asked anyway (not
		// understood).
	case globMatch(p.name, name.text):
	case !strings.Contains(p.name, "/") && globMatch(p.name, path.Base(name.text)):
	default:
		return false
	}
	dynFlags := false
	var pos []arg
	for _, a := range args {
		switch a.kind {
		case argFlag:
			if !p.rest {
				for _, e := range a.flags {
					if !anyGlob(p.flags, e) {
						return false
					}
				}
			}
		case argDyn:
			dynFlags = dynFlags || a.optsOpen
			pos = append(pos, a)
		default:
			pos = append(pos, a)
		}
	}
	for _, f := range p.flags {
		if !dynFlags && !hasFlag(args, f) {
			return false
		}
	}
	return seqMayMatch(p.pos, p.rest, pos)
}

// seqMayMatch reports whether the positional words (and dynamic words) of
// a command may match the pattern's positional globs in order, followed by
// anything when rest is set. It is a dynamic program over (pattern index,
// word index), so it stays linear in the number of words per pattern word.
func seqMayMatch(pat []string, rest bool, args []arg) bool {
	np, na := len(pat), len(args)
	// ok[i*(na+1)+j]: pat[i:] may match args[j:].
	ok := make([]bool, (np+1)*(na+1))
	at := func(i, j int) bool { return ok[i*(na+1)+j] }
	for i := np; i >= 0; i-- {
		for j := na; j >= 0; j-- {
			var v bool
			switch {
			case i == np && rest:
				v = true
			case j == na:
				v = i == np
			default:
				a := args[j]
				if a.kind == argDyn {
					v = at(i, j+1) // expands to nothing (or to flags)
					if !v && i < np {
						if a.multi {
							v = at(i+1, j)
						} else {
							v = at(i+1, j+1)
						}
					}
				} else {
					v = (i < np && globMatch(pat[i], a.text) && at(i+1, j+1)) || (a.skippable && at(i, j+1))
				}
			}
			ok[i*(na+1)+j] = v
		}
	}
	return ok[0]
}

func anyGlob(globs []string, s string) bool {
	for _, g := range globs {
		if globMatch(g, s) {
			return true
		}
	}
	return false
}

// hasFlag reports whether a flag word of args has an element matching glob.
func hasFlag(args []arg, glob string) bool {
	for _, a := range args {
		if a.kind == argFlag && anyMatch(glob, a.flags) {
			return true
		}
	}
	return false
}

func anyMatch(glob string, ss []string) bool {
	for _, s := range ss {
		if globMatch(glob, s) {
			return true
		}
	}
	return false
}

// hasAssign reports whether cs has an assignment matching pa. A dynamic
// value matches only a "*" glob, or anything when may is set.
func hasAssign(cs []shAssign, pa patAssign, may bool) bool {
	for _, ca := range cs {
		if ca.name != pa.name {
			continue
		}
		if ca.value.static && globMatch(pa.value, ca.value.text) || !ca.value.static && (may || pa.value == "*") {
			return true
		}
	}
	return false
}

// assignsEqual reports whether the command's assignments are exactly the
// pattern's (as a set).
func assignsEqual(ps []patAssign, cs []shAssign) bool {
	for _, pa := range ps {
		if !hasAssign(cs, pa, false) {
			return false
		}
	}
	for _, ca := range cs {
		found := false
		for _, pa := range ps {
			if hasAssign([]shAssign{ca}, pa, false) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
