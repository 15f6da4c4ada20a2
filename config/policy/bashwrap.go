package policy

import (
	"path"
	"slices"
	"strings"
)

// This file follows commands that run other commands (sudo, env, xargs,
// sh -c, eval, find -exec, …): the command they run is checked as a
// command of its own. Options a wrapper does not document, or a word that
// may expand to several words where the wrapper reads its options, make
// the command "not understood".

// unwrapped is what a wrapper invocation runs.
type unwrapped struct {
	plain   bool       // not a wrapper invocation after all (command -v x, bash script.sh, env alone): an ordinary command
	self    bool       // the wrapper needs an allow rule itself (sudo, su, doas, find); else it is allowed unless a deny or ask rule matches it
	inner   [][]shWord // commands it runs
	code    []string   // shell code it runs
	assigns []shAssign // environment it gives what it runs
	unknown string     // why it is not understood
}

// wrapperName returns the name under which word may be a known wrapper:
// the word itself, or the base name of a path in a system directory.
func wrapperName(word string) string {
	if !strings.Contains(word, "/") {
		return word
	}
	switch path.Dir(path.Clean(word)) {
	case "/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin":
		return path.Base(word)
	}
	return ""
}

// disguisedProgram returns why the program path word may run a shell or
// a wrapper the policy would not follow, or "": a path under /proc or
// /dev (/proc/self/exe is the shell itself), or a path outside the
// system directories whose base name is a wrapper's (./bash, /proc/self/
// root/usr/bin/env).
func disguisedProgram(word string) string {
	if !strings.Contains(word, "/") {
		return ""
	}
	clean := path.Clean(word)
	if strings.HasPrefix(clean, "/proc/") || strings.HasPrefix(clean, "/dev/") {
		return "a program under /proc or /dev"
	}
	if _, ok := unwrap(path.Base(clean), nil); ok && wrapperName(word) == "" {
		return "a path to a shell or wrapper outside the system directories"
	}
	return ""
}

// simple records a simple command and, for a wrapper, what it runs.
func (a *analyzer) simple(c shCmd, ctx shContext) {
	if len(c.words) == 0 {
		a.add(c)
		return
	}
	name := c.words[0]
	if !name.static {
		c.unknown = "the command name is not a literal word"
		a.add(c)
		return
	}
	if why := disguisedProgram(name.text); why != "" {
		c.unknown = why
		a.add(c)
		return
	}
	u, ok := unwrap(wrapperName(name.text), c.words[1:])
	switch {
	case ok && ctx.wraps >= maxWraps:
		c.unknown = "commands wrapped too deeply"
		a.add(c)
		return
	case !ok || u.plain:
		a.add(builtinChecked(c))
		return
	case u.unknown != "":
		c.unknown = u.unknown
		a.add(c)
		return
	}
	wrapper := c
	wrapper.wrapper = !u.self
	a.add(wrapper)
	inner := ctx
	inner.assigns = append(append([]shAssign(nil), c.assigns...), u.assigns...)
	inner.writes = c.writes
	inner.wraps++
	for _, words := range u.inner {
		a.simple(shCmd{assigns: inner.assigns, words: words, writes: c.writes}, inner)
	}
	for _, code := range u.code {
		a.nested(code, inner, c)
	}
}

// unwrap interprets args of the wrapper name; ok is false when name is
// not a wrapper.
func unwrap(name string, args []shWord) (u unwrapped, ok bool) {
	switch name {
	case "env":
		return unwrapEnv(args), true
	case "sudo":
		return unwrapSudo(args), true
	case "doas":
		return unwrapDoas(args), true
	case "su":
		return unwrapSu(args), true
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash":
		return unwrapShell(args), true
	case "eval":
		return unwrapEval(args), true
	case "trap":
		return unwrapTrap(args), true
	case "xargs":
		return unwrapXargs(args), true
	case "find":
		return unwrapFind(args), true
	case "command":
		return unwrapCommand(args), true
	}
	if spec, ok := simpleWrappers[name]; ok {
		return spec.unwrap(args), true
	}
	return unwrapped{}, false
}

// wrapperSpec describes a wrapper that takes options, then a fixed number
// of operands, then the command it runs.
type wrapperSpec struct {
	opts     optSpec
	operands int // words between the options and the command (timeout's duration)
}

// simpleWrappers run their command unchanged but for scheduling, time
// limits, buffering or the session: the command they run must be allowed;
// they need no allow rule themselves, but deny and ask rules apply to them.
var simpleWrappers = map[string]wrapperSpec{
	"nohup":   {},
	"builtin": {},
	"exec":    {opts: optSpec{short: "cl", shortArg: "a"}},
	"nice":    {opts: optSpec{short: "0123456789", shortArg: "n", longArg: []string{"adjustment"}}},
	"timeout": {opts: optSpec{short: "v", shortArg: "sk", long: []string{"preserve-status", "foreground", "verbose"}, longArg: []string{"signal", "kill-after"}}, operands: 1},
	"stdbuf":  {opts: optSpec{shortArg: "ioe", longArg: []string{"input", "output", "error"}}},
	"setsid":  {opts: optSpec{short: "cfw", long: []string{"ctty", "fork", "wait"}}},
	"ionice":  {opts: optSpec{short: "t", shortArg: "cn", long: []string{"ignore"}, longArg: []string{"class", "classdata"}}},
	"time":    {opts: optSpec{short: "pvq", shortArg: "f", long: []string{"portability", "verbose", "quiet"}, longArg: []string{"format"}}},
}

func (s wrapperSpec) unwrap(args []shWord) unwrapped {
	i, why := s.opts.parse(args, nil)
	if why != "" {
		return unwrapped{unknown: why}
	}
	for n := 0; n < s.operands; n++ {
		if i >= len(args) {
			return unwrapped{plain: true}
		}
		if args[i].multi {
			return unwrapped{unknown: "an expansion where an operand is expected"}
		}
		i++
	}
	if i >= len(args) {
		return unwrapped{plain: true}
	}
	return unwrapped{inner: [][]shWord{args[i:]}}
}

func unwrapEnv(args []shWord) unwrapped {
	spec := optSpec{short: "i0v", shortArg: "uC", long: []string{"ignore-environment", "null", "debug"}, longArg: []string{"unset", "chdir"}, dashAlone: true}
	i, why := spec.parse(args, nil)
	if why != "" {
		return unwrapped{unknown: why}
	}
	assigns, i, why := leadingAssigns(args, i)
	if why != "" {
		return unwrapped{unknown: why}
	}
	if i >= len(args) {
		return unwrapped{plain: true}
	}
	return unwrapped{inner: [][]shWord{args[i:]}, assigns: assigns}
}

// leadingAssigns reads NAME=value words from args[i:].
func leadingAssigns(args []shWord, i int) ([]shAssign, int, string) {
	var out []shAssign
	for ; i < len(args); i++ {
		w := args[i]
		name, value, ok := strings.Cut(w.prefix, "=")
		if !ok || !validEnvName(name) {
			if !w.static && w.multi {
				return nil, i, "an expansion where an assignment or the command is expected"
			}
			break
		}
		v := shWord{text: value, prefix: value, src: strings.TrimPrefix(w.src, name+"="), static: w.static}
		if !w.static {
			v.text, v.prefix = "", ""
		}
		out = append(out, shAssign{name: name, value: v})
	}
	return out, i, ""
}

func unwrapSudo(args []shWord) unwrapped {
	// Options that run nothing (-l, -v, -e, …) still have what follows
	// checked as a command: it errs on the side of asking.
	spec := optSpec{
		short:    "AbBEHiKklnPSsVve",
		shortArg: "CDgpRrTtUu",
		long: []string{"askpass", "background", "bell", "edit", "help", "list", "login", "non-interactive",
			"preserve-env", "preserve-groups", "remove-timestamp", "reset-timestamp", "set-home", "shell", "stdin", "validate", "version"},
		longArg: []string{"chdir", "close-from", "command-timeout", "group", "host", "other-user", "prompt", "role", "type", "user"},
		longOpt: []string{"preserve-env"},
	}
	i, why := spec.parse(args, nil)
	if why != "" {
		return unwrapped{unknown: why}
	}
	assigns, i, why := leadingAssigns(args, i)
	switch {
	case why != "":
		return unwrapped{unknown: why}
	case i >= len(args):
		return unwrapped{plain: true}
	}
	return unwrapped{self: true, inner: [][]shWord{args[i:]}, assigns: assigns}
}

func unwrapDoas(args []shWord) unwrapped {
	i, why := optSpec{short: "nsL", shortArg: "uC"}.parse(args, nil)
	switch {
	case why != "":
		return unwrapped{unknown: why}
	case i >= len(args):
		return unwrapped{plain: true}
	}
	return unwrapped{self: true, inner: [][]shWord{args[i:]}}
}

func unwrapSu(args []shWord) unwrapped {
	var code *shWord
	spec := optSpec{short: "lmpfP", shortArg: "cgGsw", long: []string{"login", "preserve-environment", "pty"},
		longArg: []string{"command", "session-command", "group", "supp-group", "shell", "whitelist-environment"}, dashAlone: true}
	i, why := spec.parse(args, func(opt string, v shWord) {
		if opt == "-c" || opt == "--command" || opt == "--session-command" {
			code = &v
		}
	})
	switch {
	case why != "":
		return unwrapped{unknown: why}
	case i < len(args)-1: // words after the user go to the user's shell
		return unwrapped{unknown: "arguments for the target user's shell"}
	case code == nil:
		return unwrapped{plain: true}
	case !code.static:
		return unwrapped{unknown: "the command string is not a literal"}
	}
	return unwrapped{self: true, code: []string{code.text}}
}

// unwrapShell follows sh -c 'code'; a shell running a script or its
// standard input is an ordinary command.
//
// A login or interactive shell (-l, -i, --login, --rcfile) runs startup
// files the policy cannot read; -x and -v expand PS4 from the
// environment, -k makes words assignments, -O sets shell options: those
// are not understood, nor is -o with an option setWhy does not allow.
func unwrapShell(args []shWord) unwrapped {
	hasC := false
	badOpt := ""
	spec := optSpec{short: "abcefhmnprstuBCEHP", shortArg: "o", plus: true,
		long: []string{"noediting", "noprofile", "norc", "posix", "restricted"}}
	i, why := spec.parse(args, func(opt string, v shWord) {
		hasC = hasC || opt == "-c"
		if opt == "-o" && (!v.static || !setOptions[v.text]) && badOpt == "" {
			badOpt = "the shell option -o " + v.src
		}
	})
	switch {
	case why != "":
		return unwrapped{unknown: why}
	case badOpt != "":
		return unwrapped{unknown: badOpt}
	case !hasC:
		return unwrapped{plain: true}
	case i >= len(args):
		return unwrapped{unknown: "-c without a command string"}
	case !args[i].static:
		return unwrapped{unknown: "the command string is not a literal"}
	}
	return unwrapped{code: []string{args[i].text}}
}

// unwrapEval joins its words into the code it runs, as eval does.
func unwrapEval(args []shWord) unwrapped {
	parts := make([]string, len(args))
	for i, w := range args {
		if !w.static {
			return unwrapped{unknown: "eval of a string that is not a literal"}
		}
		parts[i] = w.text
	}
	if len(parts) == 0 {
		return unwrapped{}
	}
	return unwrapped{code: []string{strings.Join(parts, " ")}}
}

// unwrapTrap follows the action of trap 'action' SIGNAL…
func unwrapTrap(args []shWord) unwrapped {
	list := false
	i, why := optSpec{short: "lp"}.parse(args, func(string, shWord) { list = true })
	switch {
	case why != "":
		return unwrapped{unknown: why}
	case list || len(args)-i < 2: // trap -p, or trap SIG alone resets
		return unwrapped{plain: true}
	case !args[i].static:
		return unwrapped{unknown: "a trap action that is not a literal"}
	case args[i].text == "" || args[i].text == "-":
		return unwrapped{}
	}
	return unwrapped{code: []string{args[i].text}}
}

// unwrapCommand: command -v/-V only looks a name up; command [-p] cmd runs it.
func unwrapCommand(args []shWord) unwrapped {
	lookup := false
	i, why := optSpec{short: "pvV"}.parse(args, func(opt string, _ shWord) {
		lookup = lookup || opt != "-p"
	})
	switch {
	case why != "":
		return unwrapped{unknown: why}
	case lookup || i >= len(args):
		return unwrapped{plain: true}
	}
	return unwrapped{inner: [][]shWord{args[i:]}}
}

// unwrapXargs: the command gets words read from the input appended, or
// substituted for the replace string with -I.
func unwrapXargs(args []shWord) unwrapped {
	replace := ""
	spec := optSpec{
		short: "0oprtx", shortArg: "adEILnPs", shortOpt: "eil",
		long:    []string{"exit", "interactive", "no-run-if-empty", "null", "open-tty", "show-limits", "verbose"},
		longArg: []string{"arg-file", "delimiter", "max-args", "max-chars", "max-procs", "process-slot-var"},
		longOpt: []string{"eof", "replace", "max-lines"},
	}
	badReplace := false
	i, why := spec.parse(args, func(opt string, v shWord) {
		switch opt {
		case "-I", "-i", "--replace":
			replace = v.text
			if !v.static {
				badReplace = true
			}
			if replace == "" && opt != "-I" {
				replace = "{}"
			}
		}
	})
	switch {
	case why != "":
		return unwrapped{unknown: why}
	case badReplace:
		return unwrapped{unknown: "a replace string that is not a literal"}
	}
	words := slices.Clone(args[i:])
	if len(words) == 0 {
		words = []shWord{litWord("echo")}
	}
	if replace == "" {
		words = append(words, shWord{src: "…", multi: true})
		return unwrapped{inner: [][]shWord{words}}
	}
	for j, w := range words {
		if !w.static || strings.Contains(w.text, replace) {
			words[j] = shWord{src: w.src} // holds an input line
		}
	}
	return unwrapped{inner: [][]shWord{words}}
}

// unwrapFind checks find itself and each command of -exec, -execdir, -ok
// and -okdir; {} stands for a found path.
func unwrapFind(args []shWord) unwrapped {
	u := unwrapped{self: true}
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w.multi {
			return unwrapped{unknown: "an expansion among find's arguments"}
		}
		switch w.text {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		var cmd []shWord
		end, braces := false, false
		for i++; i < len(args); i++ {
			x := args[i]
			if x.static && (x.text == ";" || (x.text == "+" && braces)) {
				end = true
				break
			}
			braces = x.static && x.text == "{}"
			if !x.static || strings.Contains(x.text, "{}") {
				x = shWord{src: x.src} // holds a found path
			}
			cmd = append(cmd, x)
		}
		if !end || len(cmd) == 0 {
			return unwrapped{unknown: w.text + " without a command and its terminating ';' or '+'"}
		}
		u.inner = append(u.inner, cmd)
	}
	if len(u.inner) == 0 {
		return unwrapped{plain: true}
	}
	return u
}

// optSpec describes the options of a wrapper, getopt style: options
// come first and stop at the first operand or "--".
type optSpec struct {
	short     string   // short options without an argument
	shortArg  string   // short options with an argument, attached or in the next word
	shortOpt  string   // short options with an optional, attached argument
	long      []string // long options without an argument
	longArg   []string // long options with an argument (--x=v or --x v)
	longOpt   []string // long options with an optional argument (--x or --x=v)
	plus      bool     // +o style options too (shells)
	dashAlone bool     // "-" alone is an option (env -, su -)
}

// parse reads the options at the start of args, calling on (if not nil)
// for each, and returns the index of the first operand. why is set for an
// option it does not know, a missing argument, or a word that may expand
// to several words where an option may be.
func (s optSpec) parse(args []shWord, on func(opt string, val shWord)) (i int, why string) {
	seen := func(opt string, val shWord) {
		if on != nil {
			on(opt, val)
		}
	}
	for i < len(args) {
		w := args[i]
		if !w.static {
			if w.multi {
				return i, "an expansion where an option may be"
			}
			if strings.HasPrefix(w.prefix, "-") {
				return i, "an option that is not a literal"
			}
			return i, ""
		}
		t := w.text
		switch {
		case t == "--":
			return i + 1, ""
		case t == "-" && s.dashAlone:
			seen("-", shWord{})
			i++
			continue
		case strings.HasPrefix(t, "--"):
			name, val, hasVal := strings.Cut(t[2:], "=")
			switch {
			case slices.Contains(s.longOpt, name):
				seen("--"+name, litWord(val))
			case slices.Contains(s.long, name) && !hasVal:
				seen("--"+name, shWord{})
			case slices.Contains(s.longArg, name):
				v := litWord(val)
				if !hasVal {
					if i++; i >= len(args) {
						return i, "option " + t + " without its argument"
					}
					if v = args[i]; v.multi {
						return i, "an expansion as the argument of " + t
					}
				}
				seen("--"+name, v)
			default:
				return i, "unknown option " + t
			}
			i++
			continue
		case len(t) < 2 || !(t[0] == '-' || (s.plus && t[0] == '+')):
			return i, "" // the first operand
		}
		for j := 1; j < len(t); j++ {
			opt := "-" + t[j:j+1]
			switch c := t[j]; {
			case strings.IndexByte(s.short, c) >= 0:
				seen(opt, shWord{})
			case strings.IndexByte(s.shortOpt, c) >= 0:
				seen(opt, litWord(t[j+1:]))
				j = len(t)
			case strings.IndexByte(s.shortArg, c) >= 0:
				v := litWord(t[j+1:])
				if j+1 == len(t) {
					if i++; i >= len(args) {
						return i, "option " + opt + " without its argument"
					}
					if v = args[i]; v.multi {
						return i, "an expansion as the argument of " + opt
					}
				}
				seen(opt, v)
				j = len(t)
			default:
				return i, "unknown option " + opt
			}
		}
		i++
	}
	return i, ""
}
