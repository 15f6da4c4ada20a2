package policy

import (
	"regexp"
	"strings"
)

// Bash builtins run inside the shell: their arguments can name variables
// (printf -v, read, unset, test -v, declare), which Bash resolves with
// their subscripts evaluated as arithmetic, or can change what later
// commands mean (alias, hash -p, enable, set -k). So every builtin is
// checked by the entry of builtinChecks for its name; a builtin without
// an entry, or whose check fails, is not understood (asked). A name that
// is not a builtin is a program: Bash only passes it its words.

// bashBuiltins are the builtins of Bash 5.2 (compgen -b).
var bashBuiltins = wordSet(". : [ alias bg bind break builtin caller cd command compgen complete compopt " +
	"continue declare dirs disown echo enable eval exec exit export false fc fg getopts hash help history jobs " +
	"kill let local logout mapfile popd printf pushd pwd read readarray readonly return set shift shopt source " +
	"suspend test times trap true type typeset ulimit umask unalias unset wait")

// wordSet returns the set of the space-separated words of s.
func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// builtinCheck returns why a builtin invocation with args is not
// understood, or "".
type builtinCheck func(args []shWord) string

// understood is the check of a builtin that evaluates none of its words.
func understood([]shWord) string { return "" }

// builtinChecks has an entry for each builtin the policy understands.
// Not here, so always asked: bind, compgen, complete, compopt, enable
// (loads code), fc and history (run or write history).
var builtinChecks = map[string]builtinCheck{
	".": understood, ":": understood, "bg": understood, "builtin": understood, "caller": understood,
	"cd": understood, "command": understood, "dirs": understood, "disown": understood, "echo": understood,
	"eval": understood, "exec": understood, "false": understood, "fg": understood, "help": understood,
	"jobs": understood, "kill": understood, "logout": understood, "popd": understood, "pushd": understood,
	"pwd": understood, "source": understood, "suspend": understood, "times": understood, "trap": understood,
	"true": understood, "type": understood, "ulimit": understood, "umask": understood, "unalias": understood,

	"break": numericArg, "continue": numericArg, "exit": numericArg, "return": numericArg, "shift": numericArg,
	"let":       letWhy,
	"declare":   declWhy("fFgprtxlu"),
	"typeset":   declWhy("fFgprtxlu"),
	"local":     declWhy("fFgprtxlu"),
	"export":    declWhy("fnp"),
	"readonly":  declWhy("fp"),
	"printf":    printfWhy,
	"read":      readWhy,
	"mapfile":   mapfileWhy,
	"readarray": mapfileWhy,
	"getopts":   getoptsWhy,
	"unset":     unsetWhy,
	"wait":      waitWhy,
	"test":      func(args []shWord) string { return testWhy(args) },
	"[":         func(args []shWord) string { return testWhy(trimBracket(args)) },
	"set":       setWhy,
	"shopt":     shoptWhy,
	"hash":      hashWhy,
	"alias":     aliasWhy,
}

// builtinChecked marks c not understood when it invokes a builtin that
// fails its check.
func builtinChecked(c shCmd) shCmd {
	if c.unknown != "" || len(c.words) == 0 || !c.words[0].static || !bashBuiltins[c.words[0].text] {
		return c
	}
	name := c.words[0].text
	check, ok := builtinChecks[name]
	switch {
	case !ok:
		c.unknown = "the builtin " + name + " is always asked"
	default:
		if why := check(c.words[1:]); why != "" {
			c.unknown = name + ": " + why
		}
	}
	return c
}

var (
	digits     = regexp.MustCompile(`^[0-9]+$`)
	exitStatus = regexp.MustCompile(`^-?[0-9]+$`)
)

// builtinOpts parses the options of a builtin with spec, and also refuses
// a word with an expansion where an option may still be (its value may
// start with "-").
func builtinOpts(args []shWord, spec optSpec, on func(opt string, v shWord)) (int, string) {
	i, why := spec.parse(args, on)
	if why == "" && i < len(args) && !args[i].static && args[i].prefix == "" && (i == 0 || !args[i-1].static || args[i-1].text != "--") {
		why = "an expansion where an option may be"
	}
	return i, why
}

// staticName returns why w is not a literal variable name Bash assigns
// without evaluating anything.
func staticName(w shWord) string {
	switch {
	case !w.static:
		return "a variable name that is not a literal"
	case !assignableName(w.text):
		return "`" + w.text + "` is not a plain variable name (Bash evaluates a subscript or the value)"
	}
	return ""
}

// numericArg: break, continue, exit, return and shift take at most one
// literal number.
func numericArg(args []shWord) string {
	switch {
	case len(args) == 0:
		return ""
	case len(args) > 1 || !args[0].static || !exitStatus.MatchString(args[0].text):
		return "an argument that is not a literal number"
	}
	return ""
}

// letWhy: every expression of let must be constant.
func letWhy(args []shWord) string {
	for _, w := range args {
		if !w.static || !constText.MatchString(w.text) {
			return "arithmetic with a variable or an expansion"
		}
	}
	return ""
}

var declOperand = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)(\+?=|$)`)

// declWhy checks declare, typeset, local, export and readonly: only the
// flags in allowed (no -i, -a, -A, -n: they evaluate values or names),
// and operands that are plain names or NAME=value.
func declWhy(allowed string) builtinCheck {
	return func(args []shWord) string {
		funcs, endOpts := false, false
		for _, w := range args {
			if !w.static {
				m := declOperand.FindStringSubmatch(w.prefix)
				if m == nil || m[2] == "" {
					return "a word with an expansion that may be an option or a name"
				}
				if !assignableName(m[1]) {
					return "an assignment to " + m[1] + ", which Bash evaluates as arithmetic"
				}
				endOpts = true
				continue
			}
			t := w.text
			if !endOpts && len(t) > 1 && (t[0] == '-' || t[0] == '+') {
				if t == "--" {
					endOpts = true
					continue
				}
				for _, c := range t[1:] {
					if !strings.ContainsRune(allowed, c) {
						return "the option " + string(t[0]) + string(c)
					}
					funcs = funcs || c == 'f' || c == 'F'
				}
				continue
			}
			endOpts = true
			if funcs {
				continue // function names: looked up, not evaluated
			}
			m := declOperand.FindStringSubmatch(t)
			if m == nil {
				return "`" + t + "` is not a plain variable name"
			}
			if !assignableName(m[1]) {
				return "an assignment to " + m[1] + ", which Bash evaluates as arithmetic"
			}
		}
		return ""
	}
}

func printfWhy(args []shWord) string {
	var why string
	_, optWhy := builtinOpts(args, optSpec{shortArg: "v"}, func(_ string, v shWord) { why = staticName(v) })
	if optWhy != "" {
		return optWhy
	}
	return why
}

func readWhy(args []shWord) string {
	var why string
	i, optWhy := builtinOpts(args, optSpec{short: "ers", shortArg: "adinNptu"}, func(opt string, v shWord) {
		if opt == "-a" && why == "" {
			why = staticName(v)
		}
	})
	if optWhy != "" {
		return optWhy
	}
	for _, w := range args[i:] {
		if why == "" {
			why = staticName(w)
		}
	}
	return why
}

func mapfileWhy(args []shWord) string {
	var why string
	i, optWhy := builtinOpts(args, optSpec{short: "t", shortArg: "dnOsuCc"}, func(opt string, v shWord) {
		switch {
		case why != "":
		case opt == "-C":
			why = "a callback (-C) runs code"
		case opt != "-d" && (!v.static || !digits.MatchString(v.text)):
			why = "the option " + opt + " with a value that is not a literal number"
		case opt == "-d" && !v.static:
			why = "a delimiter that is not a literal"
		}
	})
	switch {
	case optWhy != "":
		return optWhy
	case why != "":
		return why
	case len(args)-i > 1:
		return "more than one array name"
	case len(args)-i == 1:
		return staticName(args[i])
	}
	return ""
}

func getoptsWhy(args []shWord) string {
	if len(args) < 2 {
		return ""
	}
	return staticName(args[1])
}

func unsetWhy(args []shWord) string {
	funcs := false
	i, why := builtinOpts(args, optSpec{short: "fvn"}, func(opt string, _ shWord) { funcs = funcs || opt == "-f" })
	if why != "" {
		return why
	}
	for _, w := range args[i:] {
		switch {
		case !w.static:
			return "a name that is not a literal"
		case !funcs && !validEnvName(w.text):
			return "`" + w.text + "` is not a plain variable name (Bash evaluates a subscript)"
		}
	}
	return ""
}

func waitWhy(args []shWord) string {
	var why string
	i, optWhy := builtinOpts(args, optSpec{short: "fn", shortArg: "p"}, func(_ string, v shWord) { why = staticName(v) })
	if optWhy != "" {
		return optWhy
	}
	for _, w := range args[i:] {
		if !w.static && why == "" {
			why = "an operand that is not a literal"
		}
	}
	return why
}

// testUnary and testBinary are the operators of test and [ after which a
// word with an expansion is only an operand.
var (
	testUnary  = map[string]bool{"-b": true, "-c": true, "-d": true, "-e": true, "-f": true, "-g": true, "-h": true, "-k": true, "-p": true, "-r": true, "-s": true, "-t": true, "-u": true, "-w": true, "-x": true, "-G": true, "-L": true, "-N": true, "-O": true, "-S": true, "-z": true, "-n": true}
	testBinary = map[string]bool{"=": true, "==": true, "!=": true, "<": true, ">": true, "-eq": true, "-ne": true, "-lt": true, "-le": true, "-gt": true, "-ge": true, "-nt": true, "-ot": true, "-ef": true}
)

func trimBracket(args []shWord) []shWord {
	if n := len(args); n > 0 && args[n-1].static && args[n-1].text == "]" {
		return args[:n-1]
	}
	return args
}

// testWhy checks test and [: -v and -R look a name up, subscript
// included, so their operand must be a plain name; a word with an
// expansion may become such an operator unless it stands where only an
// operand can (after a unary or binary operator, before a binary one).
func testWhy(args []shWord) string {
	if len(args) == 1 && !args[0].multi {
		return "" // one word: a string test
	}
	for i, w := range args {
		if w.static {
			if w.text == "-v" || w.text == "-R" {
				if i+1 >= len(args) || !args[i+1].static || !validEnvName(args[i+1].text) {
					return w.text + " of a name that is not a plain variable name"
				}
			}
			continue
		}
		prevOp := i > 0 && args[i-1].static && (testUnary[args[i-1].text] || testBinary[args[i-1].text])
		nextOp := i+1 < len(args) && args[i+1].static && testBinary[args[i+1].text]
		if w.multi || !(prevOp || nextOp) {
			return "a word with an expansion where an operator may be"
		}
	}
	return ""
}

var (
	setLetters = "abefhmnuBCEHP"
	setOptions = map[string]bool{"allexport": true, "braceexpand": true, "errexit": true, "errtrace": true, "hashall": true,
		"noclobber": true, "noexec": true, "noglob": true, "notify": true, "nounset": true, "pipefail": true}
	shoptSafe = map[string]bool{"nullglob": true, "dotglob": true, "globstar": true, "failglob": true, "nocaseglob": true,
		"nocasematch": true, "extglob": true, "lastpipe": true, "inherit_errexit": true}
)

// setWhy allows the options in setLetters and setOptions; -x and -v
// (which expand PS4 and print), -k, -T and others are asked.
func setWhy(args []shWord) string {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.static {
			return "a word with an expansion where an option may be"
		}
		t := w.text
		if t == "--" || t == "-" || len(t) < 2 || (t[0] != '-' && t[0] != '+') {
			return "" // positional parameters follow
		}
		for _, c := range t[1:] {
			switch {
			case c == 'o':
				if i+1 < len(args) {
					i++
					if !args[i].static || !setOptions[args[i].text] {
						return "the option -o " + args[i].src
					}
				}
			case !strings.ContainsRune(setLetters, c):
				return "the option " + string(t[0]) + string(c)
			}
		}
	}
	return ""
}

func shoptWhy(args []shWord) string {
	set, setOpts := false, false
	i, why := builtinOpts(args, optSpec{short: "supqo"}, func(opt string, _ shWord) {
		set = set || opt == "-s" || opt == "-u"
		setOpts = setOpts || opt == "-o"
	})
	if why != "" || !set {
		return why
	}
	for _, w := range args[i:] {
		if !w.static || !(shoptSafe[w.text] || setOpts && setOptions[w.text]) {
			return "the shell option " + w.src
		}
	}
	return ""
}

func hashWhy(args []shWord) string {
	_, why := builtinOpts(args, optSpec{short: "lrtd", shortArg: "p"}, func(opt string, _ shWord) {})
	for _, w := range args {
		if w.static && strings.HasPrefix(w.text, "-") && strings.Contains(w.text, "p") {
			return "-p sets the program a later command runs"
		}
	}
	return why
}

func aliasWhy(args []shWord) string {
	for _, w := range args {
		if !w.static || w.text != "-p" {
			return "an alias changes what a later command runs"
		}
	}
	return ""
}
