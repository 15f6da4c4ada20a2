package policy

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// This file turns a Bash command line into the simple commands it runs,
// as the policy sees them (see docs/rules.md). Anything the analysis
// cannot follow is kept as a command marked "not understood", which a rule
// can never allow.

// shWord is one word of a simple command.
type shWord struct {
	text   string // the word after quote removal; meaningful only when static
	prefix string // the literal text before the first expansion (all of text when static)
	src    string // the word as written, for messages
	static bool   // no expansion, substitution, unquoted glob or brace expansion
	multi  bool   // may expand to zero or several words (unquoted expansion, glob, braces)
}

// shAssign is an environment assignment given to a command (NAME=value).
type shAssign struct {
	name  string
	value shWord
}

// shCmd is one simple command found in a command line.
type shCmd struct {
	assigns []shAssign // prefix assignments, env/sudo assignments and those inherited from a wrapper
	words   []shWord   // the command name and its arguments; empty for a bare assignment or a lone redirection
	writes  string     // an output redirection to a file (not /dev/null), as written; "" if none
	unknown string     // why the command is not understood; "" if it is
	what    string     // a construct that is not understood (an arithmetic context, a test), as written; no words then
	wrapper bool       // a wrapper that runs a command checked on its own (nice, timeout, sh -c, …): allowed unless a deny or ask rule matches it

	args []arg // words[1:] as the patterns see them; see classified
}

// classified returns the arguments of c classified for matching, computed
// once.
func (c *shCmd) classified() []arg {
	if c.args == nil && len(c.words) > 1 {
		c.args = classify(c.words[1:])
	}
	return c.args
}

// display is the command as written, shortened for messages.
func (c *shCmd) display() string {
	var parts []string
	for _, a := range c.assigns {
		parts = append(parts, a.name+"="+a.value.src)
	}
	for _, w := range c.words {
		parts = append(parts, w.src)
	}
	if c.what != "" {
		parts = append(parts, c.what)
	}
	if c.writes != "" {
		parts = append(parts, "> "+c.writes)
	}
	return shorten(strings.Join(parts, " "))
}

// maxShDepth bounds how deeply shell code run by other commands (sh -c,
// eval, trap, su -c) is followed, and maxWraps how many wrappers (sudo
// env nice …) are followed around one command; deeper is not understood.
const (
	maxShDepth = 8
	maxWraps   = 16
)

// shContext is what an enclosing statement or wrapper gives the commands
// inside it.
type shContext struct {
	assigns []shAssign // environment given by a wrapper or prefix assignment
	writes  string     // an output redirection of an enclosing statement
	wraps   int        // wrappers around the current command
}

// analyzer collects the simple commands of one command line.
type analyzer struct {
	src   string // the source being walked, for word text in messages
	depth int    // nesting of the shell code being walked (sh -c, eval, …)
	cmds  []shCmd
}

func newShParser() *syntax.Parser {
	return syntax.NewParser(syntax.Variant(syntax.LangBash))
}

// analyzeBash returns the simple commands of a Bash command line. When the
// line does not parse, err is set and cmds holds the commands of the
// statements before the error: Bash runs those before it stops.
func analyzeBash(command string) (cmds []shCmd, err error) {
	a := &analyzer{src: command}
	err = newShParser().Stmts(strings.NewReader(command), func(s *syntax.Stmt) bool {
		a.stmt(s, shContext{})
		return true
	})
	return a.cmds, err
}

// nested analyses shell code run by a command (sh -c, eval, trap, su -c).
// owner is the command that runs it, recorded as not understood when the
// code cannot be followed.
func (a *analyzer) nested(code string, ctx shContext, owner shCmd) {
	if a.depth >= maxShDepth {
		owner.unknown = "shell code nested too deeply"
		a.add(owner)
		return
	}
	var stmts []*syntax.Stmt
	err := newShParser().Stmts(strings.NewReader(code), func(s *syntax.Stmt) bool {
		stmts = append(stmts, s)
		return true
	})
	saved := a.src
	a.src = code
	a.depth++
	for _, s := range stmts {
		a.stmt(s, ctx)
	}
	a.depth--
	a.src = saved
	if err != nil {
		owner.unknown = "the shell code it runs does not parse"
		a.add(owner)
	}
}

func (a *analyzer) add(c shCmd) { a.cmds = append(a.cmds, c) }

func (a *analyzer) stmts(ss []*syntax.Stmt, ctx shContext) {
	for _, s := range ss {
		a.stmt(s, ctx)
	}
}

// stmt walks one statement. Redirections of the statement apply to every
// command inside it.
func (a *analyzer) stmt(s *syntax.Stmt, ctx shContext) {
	if s == nil {
		return
	}
	for _, r := range s.Redirs {
		a.redirect(r, &ctx)
	}
	switch c := s.Cmd.(type) {
	case nil:
		if ctx.writes != "" { // "> file" alone truncates the file
			a.add(shCmd{writes: ctx.writes})
		}
	case *syntax.CallExpr:
		a.call(c, ctx)
	case *syntax.DeclClause:
		a.decl(c, ctx)
	case *syntax.BinaryCmd:
		a.stmt(c.X, ctx)
		a.stmt(c.Y, ctx)
	case *syntax.Block:
		a.stmts(c.Stmts, ctx)
	case *syntax.Subshell:
		a.stmts(c.Stmts, ctx)
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			a.stmts(ic.Cond, ctx)
			a.stmts(ic.Then, ctx)
		}
	case *syntax.WhileClause:
		a.stmts(c.Cond, ctx)
		a.stmts(c.Do, ctx)
	case *syntax.ForClause:
		a.forClause(c, ctx)
	case *syntax.CaseClause:
		a.wordExp(c.Word)
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				a.wordExp(p)
			}
			a.stmts(it.Stmts, ctx)
		}
	case *syntax.FuncDecl:
		a.stmt(c.Body, shContext{}) // the body runs when called; its commands are checked now
	case *syntax.ArithmCmd:
		if c.Unsigned {
			a.notUnderstood(c, "an arithmetic form Bash does not have")
		}
		a.arithm(c, c.X)
	case *syntax.TestClause:
		a.test(c.X)
	case *syntax.LetClause:
		for _, x := range c.Exprs {
			a.arithm(c, x)
		}
	case *syntax.TimeClause:
		a.stmt(c.Stmt, ctx)
	case *syntax.CoprocClause:
		a.wordExp(c.Name)
		a.stmt(c.Stmt, ctx)
	default:
		a.notUnderstood(s, "unsupported shell construct")
	}
}

// forClause walks a for or select loop: its items or arithmetic, then
// its body. A loop variable Bash evaluates as arithmetic is not
// understood; one that is sensitive counts as its assignment.
func (a *analyzer) forClause(c *syntax.ForClause, ctx shContext) {
	switch l := c.Loop.(type) {
	case *syntax.WordIter:
		for _, w := range l.Items {
			a.wordExp(w)
		}
		if c.Select {
			a.notUnderstood(c, "select evaluates the reply it reads")
		}
		if l.Name != nil && integerVars[l.Name.Value] {
			a.notUnderstood(c, "a loop over "+l.Name.Value+", which Bash evaluates as arithmetic")
		}
		if l.Name != nil && sensitiveVar(l.Name.Value) {
			a.add(shCmd{assigns: []shAssign{{name: l.Name.Value, value: shWord{src: "…"}}}, writes: ctx.writes})
		}
	case *syntax.CStyleLoop:
		a.arithm(l, l.Init)
		a.arithm(l, l.Cond)
		a.arithm(l, l.Post)
	}
	a.stmts(c.Do, ctx)
}

// source returns the text of n in the current source, for messages.
func (a *analyzer) source(n syntax.Node) string {
	if n == nil || !n.Pos().IsValid() || !n.End().IsValid() {
		return "?"
	}
	from, to := int(n.Pos().Offset()), int(n.End().Offset())
	if from < 0 || to > len(a.src) || from > to {
		return "?"
	}
	return a.src[from:to]
}

// redirect records what a redirection means for the commands it applies to.
func (a *analyzer) redirect(r *syntax.Redirect, ctx *shContext) {
	a.wordExp(r.Word)
	a.wordExp(r.Hdoc)
	if r.N != nil && strings.HasPrefix(r.N.Value, "{") && !assignableName(strings.Trim(r.N.Value, "{}")) {
		a.notUnderstood(r, "a {name} redirection to a name that is not a plain variable name")
	}
	if r.Word == nil {
		return
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.ClbOut, syntax.RdrAll, syntax.AppAll, syntax.RdrInOut:
		if w := a.word(r.Word); !w.static || !harmlessTarget(w.text) {
			ctx.writes = w.src
		}
	case syntax.DplOut: // >&2 duplicates; >&file writes the file
		if w := a.word(r.Word); !w.static || !isFdWord(w.text) {
			ctx.writes = w.src
		}
	}
}

// harmlessTarget reports whether writing to path changes no file.
func harmlessTarget(path string) bool {
	switch path {
	case "/dev/null", "/dev/stdout", "/dev/stderr":
		return true
	}
	return false
}

// isFdWord reports whether w names a file descriptor in >&w: "2", "-" or "2-".
func isFdWord(w string) bool {
	w = strings.TrimSuffix(w, "-")
	for _, c := range w {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// call handles a simple command: prefix assignments, then words.
func (a *analyzer) call(c *syntax.CallExpr, ctx shContext) {
	for _, as := range c.Assigns {
		a.assignExp(as)
	}
	for _, w := range c.Args {
		a.wordExp(w)
	}
	assigns := make([]shAssign, 0, len(c.Assigns))
	for _, as := range c.Assigns {
		assigns = append(assigns, a.assign(as))
	}
	if len(c.Args) == 0 {
		// Variables of this shell: harmless unless later commands read
		// them (PATH, IFS, LD_PRELOAD, GIT_DIR, …).
		var keep []shAssign
		for _, as := range assigns {
			if sensitiveVar(as.name) || ctx.writes != "" {
				keep = append(keep, as)
			}
		}
		if len(keep) > 0 {
			a.add(shCmd{assigns: keep, writes: ctx.writes})
		}
		return
	}
	words := make([]shWord, len(c.Args))
	for i, w := range c.Args {
		words[i] = a.word(w)
	}
	all := append(append([]shAssign(nil), ctx.assigns...), assigns...)
	a.simple(shCmd{assigns: all, words: words, writes: ctx.writes}, ctx)
}

// decl handles declare, local, export, readonly, typeset and nameref as
// the ordinary commands they are.
func (a *analyzer) decl(c *syntax.DeclClause, ctx shContext) {
	words := []shWord{{text: c.Variant.Value, prefix: c.Variant.Value, src: c.Variant.Value, static: true}}
	for _, as := range c.Args {
		a.assignExp(as)
		switch {
		case as.Index != nil: // a subscript: not a plain name (see declWhy)
			words = append(words, shWord{src: a.source(as)})
		case as.Naked && as.Name != nil:
			words = append(words, litWord(as.Name.Value))
		case as.Naked && as.Value != nil:
			words = append(words, a.word(as.Value))
		default:
			v := a.assign(as)
			w := v.value
			w.text = v.name + "=" + w.text
			w.prefix = v.name + "=" + w.prefix
			w.src = a.source(as)
			w.multi = false // an assignment's value is not split
			words = append(words, w)
		}
	}
	a.add(builtinChecked(shCmd{assigns: ctx.assigns, words: words, writes: ctx.writes}))
}

// assign converts an assignment. Appends, indexes and arrays make the
// value dynamic.
func (a *analyzer) assign(as *syntax.Assign) shAssign {
	out := shAssign{}
	if as.Name != nil {
		out.name = as.Name.Value
	}
	switch {
	case as.Value != nil:
		out.value = a.word(as.Value)
		out.value.multi = false
	default:
		out.value = shWord{static: true}
	}
	if as.Append || as.Index != nil || as.Array != nil {
		out.value.static = false
	}
	if as.Array != nil || as.Index != nil {
		out.value.src = strings.TrimPrefix(a.source(as), out.name+"=")
	}
	return out
}

// sensitiveVar reports whether assigning name can change how later
// commands run. Names with an upper-case letter (PATH, IFS, LD_PRELOAD,
// BASH_ENV, GIT_DIR, …) are; lower-case names are taken as the script's
// own variables.
func sensitiveVar(name string) bool {
	for _, c := range name {
		if c >= 'A' && c <= 'Z' {
			return true
		}
	}
	return false
}
