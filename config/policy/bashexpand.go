package policy

import (
	"regexp"

	"mvdan.cc/sh/v3/syntax"
)

// This file walks what Bash expands inside words, assignments,
// arithmetic and [[ ]] tests, with an allowlist of the node kinds the
// policy understands. Command and process substitutions are commands of
// their own. Anything else is recorded as a command that is not
// understood, so the line is asked, never allowed.
//
// Arithmetic is the reason for the care: Bash evaluates an array
// subscript inside any value it uses as a number, and runs the command
// substitutions inside that subscript; a variable named in arithmetic has
// its value evaluated in turn ("x='a[$(rm f)]'; ((x))" runs rm). So an
// arithmetic context is understood only when it holds integer constants
// and operators: a variable, an expansion or a subscript in it is asked.

// notUnderstood records the construct n as a command that is not
// understood, with why. It has no words, so no deny or ask rule for a
// program matches it: the line is asked (a deny rule for every command
// still denies it).
func (a *analyzer) notUnderstood(n syntax.Node, why string) {
	a.add(shCmd{what: a.source(n), unknown: why})
}

// wordExp walks the expansions of w.
func (a *analyzer) wordExp(w *syntax.Word) {
	if w == nil {
		return
	}
	for _, p := range w.Parts {
		a.wordPart(p)
	}
}

func (a *analyzer) wordPart(p syntax.WordPart) {
	switch x := p.(type) {
	case *syntax.Lit, *syntax.SglQuoted, *syntax.ExtGlob:
	case *syntax.DblQuoted:
		for _, q := range x.Parts {
			a.wordPart(q)
		}
	case *syntax.CmdSubst:
		if x.TempFile || x.ReplyVar {
			a.notUnderstood(x, "a ${ …; } substitution")
		}
		a.stmts(x.Stmts, shContext{})
	case *syntax.ProcSubst:
		a.stmts(x.Stmts, shContext{})
	case *syntax.ParamExp:
		a.param(x)
	case *syntax.ArithmExp:
		if x.Unsigned {
			a.notUnderstood(x, "an arithmetic form Bash does not have")
		}
		a.arithm(x, x.X)
	default:
		a.notUnderstood(p, "an expansion the policy does not know")
	}
}

// safeParamOps are the ${x@op} operators that only transform the value.
// @P expands the value as a prompt, running its command substitutions.
var safeParamOps = map[string]bool{"Q": true, "E": true, "A": true, "a": true, "U": true, "u": true, "L": true, "K": true, "k": true}

// param walks a parameter expansion. Subscripts and substring offsets are
// arithmetic; ${!x} and ${x@P} evaluate the value of x.
func (a *analyzer) param(p *syntax.ParamExp) {
	if p.Index != nil && !allIndex(p.Index) {
		a.arithm(p, p.Index)
	}
	if p.Slice != nil {
		a.arithm(p, p.Slice.Offset)
		a.arithm(p, p.Slice.Length)
	}
	if p.Repl != nil {
		a.wordExp(p.Repl.Orig)
		a.wordExp(p.Repl.With)
	}
	if p.Exp != nil {
		if p.Exp.Op == syntax.OtherParamOps {
			if op := litText(p.Exp.Word); !safeParamOps[op] {
				a.notUnderstood(p, "the ${…@"+op+"} operator")
			}
		}
		switch p.Exp.Op {
		case syntax.AssignUnset, syntax.AssignUnsetOrNull:
			if p.Param != nil && integerVars[p.Param.Value] {
				a.notUnderstood(p, "an assignment to "+p.Param.Value+", which Bash evaluates as arithmetic")
			}
		}
		a.wordExp(p.Exp.Word)
	}
	switch {
	case p.Width:
		a.notUnderstood(p, "an expansion Bash does not have")
	case p.Excl && p.Names == 0 && !(p.Index != nil && allIndex(p.Index)):
		a.notUnderstood(p, "an indirect expansion ${!…}: Bash evaluates the name it finds")
	}
}

// allIndex reports whether x is the @ or * of ${a[@]}.
func allIndex(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	if !ok {
		return false
	}
	s := litText(w)
	return s == "@" || s == "*"
}

// litText returns the text of a word made of one literal, else "".
func litText(w *syntax.Word) string {
	if w == nil || len(w.Parts) != 1 {
		return ""
	}
	if l, ok := w.Parts[0].(*syntax.Lit); ok {
		return l.Value
	}
	return ""
}

// arithm walks the arithmetic expression x of owner: its substitutions
// are commands of their own, and unless it holds only integer constants
// and operators, owner is not understood.
func (a *analyzer) arithm(owner syntax.Node, x syntax.ArithmExpr) {
	if x == nil {
		return
	}
	syntax.Walk(x, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok {
			a.wordExp(w)
			return false
		}
		return true
	})
	if !constArithm(x) {
		a.notUnderstood(owner, "arithmetic with a variable or an expansion: Bash evaluates the value it finds, subscripts and all")
	}
}

// constArithm reports whether x holds only integer constants and
// operators (no assignment, no variable, no expansion whose value is not
// a number).
func constArithm(x syntax.ArithmExpr) bool {
	switch x := x.(type) {
	case nil:
		return true
	case *syntax.BinaryArithm:
		return constOps[x.Op] && constArithm(x.X) && constArithm(x.Y)
	case *syntax.UnaryArithm:
		return x.Op != syntax.Inc && x.Op != syntax.Dec && constArithm(x.X)
	case *syntax.ParenArithm:
		return constArithm(x.X)
	case *syntax.Word:
		return x != nil && numericWord(x)
	}
	return false
}

// constOps are the binary arithmetic operators that assign nothing.
var constOps = map[syntax.BinAritOperator]bool{
	syntax.Add: true, syntax.Sub: true, syntax.Mul: true, syntax.Quo: true, syntax.Rem: true, syntax.Pow: true,
	syntax.Eql: true, syntax.Gtr: true, syntax.Lss: true, syntax.Neq: true, syntax.Leq: true, syntax.Geq: true,
	syntax.And: true, syntax.Or: true, syntax.Xor: true, syntax.Shr: true, syntax.Shl: true,
	syntax.AndArit: true, syntax.OrArit: true, syntax.Comma: true, syntax.TernQuest: true, syntax.TernColon: true,
}

// constText matches text made of integer constants (a token starting with
// a digit: 12, 0x1f, 16#ff) and arithmetic operators only. A name, a
// subscript, a quote or a $ does not match.
var constText = regexp.MustCompile(`^(?:[0-9][0-9A-Za-z@_#]*|[-+*/%<>=!&|^~?:(),\s])*$`)

// numericWord reports whether w expands to text of integer constants and
// operators: literal text matching constText, and only the parameters
// that are always a number ($#, $?, $$, ${#x}, ${#a[@]}).
func numericWord(w *syntax.Word) bool {
	var b []byte
	var add func(parts []syntax.WordPart) bool
	add = func(parts []syntax.WordPart) bool {
		for _, p := range parts {
			switch x := p.(type) {
			case *syntax.Lit:
				b = append(b, x.Value...)
			case *syntax.SglQuoted:
				if x.Dollar {
					return false
				}
				b = append(b, x.Value...)
			case *syntax.DblQuoted:
				if x.Dollar || !add(x.Parts) {
					return false
				}
			case *syntax.ParamExp:
				if !numericParam(x) {
					return false
				}
				b = append(b, '0')
			default:
				return false
			}
		}
		return true
	}
	return add(w.Parts) && constText.Match(b)
}

// numericParam reports whether p always expands to a non-empty number.
func numericParam(p *syntax.ParamExp) bool {
	if p.Excl || p.Width || p.Slice != nil || p.Repl != nil || p.Exp != nil || p.Names != 0 || p.Param == nil {
		return false
	}
	if p.Length {
		return p.Index == nil || allIndex(p.Index)
	}
	switch p.Param.Value {
	case "#", "?", "$":
		return p.Index == nil
	}
	return false
}

// test walks a [[ ]] expression. The operands of -eq, -ne, -lt, -le, -gt
// and -ge are arithmetic; -v and -R look a name up, subscript included.
func (a *analyzer) test(x syntax.TestExpr) {
	switch x := x.(type) {
	case nil:
	case *syntax.BinaryTest:
		a.test(x.X)
		a.test(x.Y)
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			if !numericTestWord(x.X) || !numericTestWord(x.Y) {
				a.notUnderstood(x, "an arithmetic comparison of a value that is not a number: Bash evaluates it, subscripts and all")
			}
		}
	case *syntax.UnaryTest:
		a.test(x.X)
		if x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar {
			if w, ok := x.X.(*syntax.Word); !ok || !validEnvName(litText(w)) {
				a.notUnderstood(x, "a "+x.Op.String()+" test of a name that is not a plain variable name")
			}
		}
	case *syntax.ParenTest:
		a.test(x.X)
	case *syntax.Word:
		a.wordExp(x)
	default:
		a.notUnderstood(x, "a test the policy does not know")
	}
}

func numericTestWord(x syntax.TestExpr) bool {
	w, ok := x.(*syntax.Word)
	return ok && w != nil && numericWord(w)
}

// assignExp walks an assignment: its subscripts are arithmetic, its value
// and array elements are words.
func (a *analyzer) assignExp(as *syntax.Assign) {
	if as == nil {
		return
	}
	if as.Index != nil {
		a.arithm(as, as.Index)
	}
	a.wordExp(as.Value)
	if as.Array != nil {
		for _, e := range as.Array.Elems {
			if e.Index != nil {
				a.arithm(as, e.Index)
			}
			a.wordExp(e.Value)
		}
	}
	if as.Name != nil && integerVars[as.Name.Value] && !(as.Value == nil || numericWord(as.Value)) {
		a.notUnderstood(as, "an assignment to "+as.Name.Value+", which Bash evaluates as arithmetic")
	}
}

// integerVars are Bash's own variables with the integer attribute: a
// value assigned to them is evaluated as arithmetic.
var integerVars = map[string]bool{
	"OPTIND": true, "RANDOM": true, "SRANDOM": true, "HISTCMD": true, "BASHPID": true, "EUID": true, "UID": true, "PPID": true,
}

// assignableName reports whether Bash assigns to name without evaluating
// anything: a plain variable name (no subscript) that is not one of
// integerVars.
func assignableName(name string) bool {
	return validEnvName(name) && !integerVars[name]
}
