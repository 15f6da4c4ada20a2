package policy

import (
	"path"
	"strings"
)

// Matching a simple command against a compiled Bash pattern: allows for
// allow rules, mayMatch for deny and ask rules (see docs/rules.md).

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
