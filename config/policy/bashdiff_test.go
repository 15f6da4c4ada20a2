package policy

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The differential test: each command line runs under the real Bash in a
// bashSandbox, and what it started is compared with what Decide says of
// it (see checkDifferential).

// diffRuleSets are the policies the runs are checked against.
var diffRuleSets = map[string][]Rule{
	// the attack of issue 20: one allow rule, one deny rule
	"attack": {
		{Tool: "Bash", Match: "rm *", Action: ActionDeny},
		{Tool: "Bash", Match: "ls *", Action: ActionAllow},
	},
	"policy": policy,
	// every program with a literal name (no redirections, no assignments)
	"star": {{Tool: "Bash", Match: "*", Action: ActionAllow}},
	// the builtins and harmless programs allowed, rm and touch denied
	// (not source and ., which run a file's code: see docs/rules.md)
	"builtins": append([]Rule{
		{Tool: "Bash", Match: "rm *", Action: ActionDeny},
		{Tool: "Bash", Match: "touch *", Action: ActionDeny},
	}, allowRules(": [ alias bg break builtin caller cd command continue declare dirs disown echo eval exec exit "+
		"export false fg getopts hash help jobs kill let local logout mapfile popd printf pushd pwd read readarray "+
		"readonly return set shift shopt suspend test times trap true type typeset ulimit umask unalias unset "+
		"wait ls cat grep sed awk find xargs env nice timeout sort head tail wc sh bash")...),
}

func allowRules(names string) []Rule {
	var out []Rule
	for _, n := range strings.Fields(names) {
		out = append(out, Rule{Tool: "Bash", Match: n + " *", Action: ActionAllow})
	}
	return out
}

// checkDifferential returns what is wrong with Decide's view of command,
// given what command did under the real Bash:
//
//   - a program that ran must be listed: the narrowest deny rule for it
//     (its literal command line) denies command, unless the analyzer
//     reported a construct it does not understand or the text does not
//     parse (then command is asked, never allowed);
//   - for each of diffRuleSets: a program that ran and that the rules
//     deny on its own means command is denied (or, not understood, asked);
//     when command is allowed, every program that ran is allowed on its
//     own and no file was written.
func checkDifferential(command string, r bashRun) []string {
	var problems []string
	cmds, parseErr := analyzeBash(command)
	unsure := parseErr != nil
	for _, c := range cmds {
		unsure = unsure || c.unknown != ""
	}
	for _, rec := range r.execs {
		lit := execCommand(rec)
		if err := CheckBashPattern(lit); err != nil {
			problems = append(problems, fmt.Sprintf("ran %s, which is not a valid pattern: %v", lit, err))
			continue
		}
		if unsure {
			continue
		}
		if v := Decide([]Rule{{Tool: "Bash", Match: lit, Action: ActionDeny}}, "Bash", command); v.Action != ActionDeny {
			problems = append(problems, fmt.Sprintf("ran %s, not listed: a deny rule for it gives %+v", lit, v))
		}
	}
	for name, rules := range diffRuleSets {
		v := Decide(rules, "Bash", command)
		for _, rec := range r.execs {
			lit := execCommand(rec)
			own := Decide(rules, "Bash", lit)
			if own.Action == ActionDeny && v.Action != ActionDeny && !(unsure && v.Action == ActionAsk) {
				problems = append(problems, fmt.Sprintf("rules %s: ran %s, denied on its own (%s), but the line is %+v", name, lit, own.Why, v))
			}
			if v.Action == ActionAllow && own.Action != ActionAllow {
				problems = append(problems, fmt.Sprintf("rules %s: allowed (%s), but ran %s, which is not allowed on its own (%+v)", name, v.Why, lit, own))
			}
		}
		if v.Action == ActionAllow && len(r.changed) > 0 {
			problems = append(problems, fmt.Sprintf("rules %s: allowed (%s), but wrote %v", name, v.Why, r.changed))
		}
	}
	return problems
}

// diffLimit is how long one command line may run in the sandbox.
const diffLimit = 3 * time.Second

// runDifferential runs command in s and fails t with what
// checkDifferential finds.
func runDifferential(t testing.TB, s *bashSandbox, command string) bashRun {
	t.Helper()
	r, err := s.run(command, diffLimit)
	if err != nil {
		t.Fatalf("run %q: %v", command, err)
	}
	if problems := checkDifferential(command, r); len(problems) > 0 {
		t.Errorf("%q under real bash ran %q, wrote %v:\n  %s", command, r.execs, r.changed, strings.Join(problems, "\n  "))
	}
	return r
}

// arithmeticCorpus holds every way of making Bash evaluate a value as
// arithmetic (or look a name up with its subscript) that issue 20 and the
// Bash manual list, each carrying a command substitution or a variable
// from the environment (envPayloadVars). Each entry also runs ls, which
// the attack rules allow.
var arithmeticCorpus = []string{
	// the attacks of issue 20
	`x='a[$(touch f)]'; ((x)); ls`,
	`[[ 'a[$(rm -f f)]' -eq 0 ]]; ls`,
	`let 'a[$(touch f)]'; ls`,
	`for q in 'a[$(touch f)]'; do ((q)); done; ls`,
	`printf -v 'a[$(touch f)]' x; ls`,
	`test -v 'a[$(touch f)]'; ls`,
	`[ -v 'a[$(touch f)]' ]; ls`,
	// variables set elsewhere (the environment) evaluated recursively
	`((x)); ls`, `((x+1)); ls`, `echo $((x)); ls`, `echo $[x]; ls`, `[[ x -eq 0 ]]; ls`, `[[ $x -eq 0 ]]; ls`,
	`[[ 1 -ne y ]]; ls`, `[[ 1 -lt z ]]; ls`, `[[ 1 -le i ]]; ls`, `[[ 1 -gt j ]]; ls`, `[[ 1 -ge n ]]; ls`,
	`let x; ls`, `let q=x; ls`, `q=$x; ((q)); ls`, `echo $(( $x )); ls`, `for ((q=x; q<0; q++)); do :; done; ls`,
	`for ((;x;)); do break; done; ls`, `echo ${a[x]}; ls`, `a=(1); echo ${a[x]}; ls`, `a=(1); echo ${#a[x]}; ls`,
	`q=abc; echo ${q:x}; ls`, `q=abc; echo ${q:0:x}; ls`, `a[x]=1; ls`, `a=([x]=1); ls`, `declare -a a=([x]=1); ls`,
	`declare -i q=x; ls`, `declare -i q; q=x; ls`, `typeset -i q=x; ls`, `f() { local -i q=x; }; f; ls`,
	`declare -n r=x; : $r; ls`, `echo ${!x}; ls`, `q=x; echo ${!q}; ls`, `q='$(touch f)'; echo ${q@P}; ls`,
	`a=(1); unset 'a[x]'; ls`, `unset 'a[$(touch f)]'; ls`, `a=(1); unset 'a[$(touch f)]'; ls`,
	`read 'a[$(touch f)]' <<< 1; ls`, `read -a 'a[$(touch f)]' <<< 1; ls`, `read OPTIND <<< x; ls`,
	`mapfile -O x q <<< 1; ls`, `mapfile -C 'touch f' -c 1 q <<< 1; ls`, `readarray 'a[$(touch f)]' <<< 1; ls`,
	`sleep 0 & wait -n -p 'a[$(touch f)]'; ls`, `shift x; ls`, `f() { return x; }; f; ls`, `(exit x); ls`,
	`for q in 1; do break x; done; ls`, `printf '%d' x; ls`, `printf '%d' 'a[$(touch f)]'; ls`,
	`[ 'a[$(touch f)]' -eq 0 ]; ls`, `test x -eq 0; ls`, `test -R 'a[$(touch f)]'; ls`, `[[ -v 'a[$(touch f)]' ]]; ls`,
	`[[ -v a[x] ]]; ls`, `RANDOM=x; ls`, `OPTIND=x; ls`, `: ${OPTIND:=x}; ls`, `for OPTIND in x; do :; done; ls`,
	`getopts a OPTIND -a; ls`, `printf -v OPTIND x; ls`, `declare OPTIND=x; ls`, `export 'a[$(touch f)]'; ls`,
	`f() { local 'a[$(touch f)]=1'; }; f; ls`, `declare 'a[$(touch f)]=1'; ls`, `q='a[$(touch f)]=1'; declare "$q"; ls`,
	`exec {a[x]}>/dev/null; ls`, `select q in a; do break; done <<< x; ls`, `history -s 'a[$(touch f)]'; ls`,
	`fc -l x; ls`, `compgen -v 'a[$(touch f)]'; ls`, `builtin let x; ls`, `command let x; ls`, `eval '((x))'; ls`,
	`bash -c '((x))'; ls`, `builtin printf -v 'a[$(touch f)]' x; ls`, `builtin declare -i q=x; ls`,
	`set -x; ls`, `alias ls='touch f'; ls`, `hash -p /bin/touch ls; ls`, `enable -n test; ls`,
	`cat <<EOF
$((x))
EOF
ls`,
	`case $((x)) in *) ls;; esac`, `echo "${q:-$((x))}"; ls`, `ls $((x))`, `ls ${a[x]}`,
	// constants stay understood, and are allowed with ls *
	`echo $((1+2)) $[3*4] ${#x} $#; ls`, `((1)) && ls`, `[[ 1 -eq 1 ]] && ls`, `[[ $# -eq 0 ]] && ls`,
	`a=(1 2); echo ${a[0]} ${a[@]} ${#a[@]}; ls`, `ls $((16#ff)) $((0x1f))`,
	// found by the fuzzer: an argument that is not UTF-8
	"git \xf6",
	// where arithmetic hides: nesting, quoting, parser edges
	`((x) ); ls`, `( (x) ); ls`, `((touch f) ); ls`, `echo $((touch f) ); ls`, `echo $((x)+(y)); ls`, `echo $( (x) ); ls`,
	"echo $(( `touch f` )); ls", `echo $[$(touch f)]; ls`, `a[$(touch f)]=1; ls`, `\let x; ls`, `\declare -i q=x; ls`,
	`'let' x; ls`, `f() { ((x)); }; ls`, `time ((x)); ls`, `! ((x)); ls`, `((x)) & ls`, `coproc ((x)); ls`,
	`[[ $((x)) ]]; ls`, `echo {1..$((x))}; ls`, `x=1 ((x)); ls`, `[[ (x -eq 1) ]]; ls`, `[[ ! x -eq 1 ]]; ls`,
	`[[ 1 -eq 1 && x -eq 1 ]]; ls`, `case 1 in $((x))) ;; esac; ls`, `echo ${x:-${a[x]}}; ls`, `echo ${a[@]:x}; ls`,
	`echo ${@:x}; ls`, `echo ${1:x}; ls`, `echo ${x/a/${a[x]}}; ls`, `echo ${!#}; ls`, `set -- x; echo ${!#}; ls`,
	`set -- x; ((${1})); ls`, `printf -v q %s x; ((q)); ls`, `read q <<< x; ((q)); ls`, `q=$(echo x); ((q)); ls`,
	`echo ${x^^} ${!a[@]} ${!x*} ${#@} $((10#1)) $((2#101)) $((1 ? 2 : 3)) $((1, 2)) $(( (1) )); ls`,
	`[[ 0x1 -eq 1 ]]; ls`, `[[ "1" -eq 1 ]]; ls`,
	// the shell under another name
	`/proc/self/exe -c 'touch f'; ls`, `/proc/self/root/usr/bin/env touch f; ls`, `/proc/$$/exe -c 'touch f'; ls`,
	`/usr/bin/../bin/env touch f; ls`, `//bin//env touch f; ls`,
}

// TestBashDifferential runs the command lines of TestDecideBash and
// arithmeticCorpus under the real Bash and checks Decide's view of each
// against what it started (checkDifferential).
func TestBashDifferential(t *testing.T) {
	s := needBashSandbox(t)
	var corpus []string
	for _, c := range decideBashCases {
		if strings.Contains(c.command, "while true") { // runs until stopped
			continue
		}
		corpus = append(corpus, c.command)
	}
	corpus = append(corpus, arithmeticCorpus...)
	start := time.Now()
	ran := 0
	for _, command := range corpus {
		r := runDifferential(t, s, command)
		ran += len(r.execs)
	}
	t.Logf("%d command lines, %d programs started, in %v", len(corpus), ran, time.Since(start).Round(time.Millisecond))
	if ran == 0 {
		t.Fatal("no program ran: the shims do not record")
	}
}

// TestBashDifferentialCatches: the check finds the attacks of issue 20
// when Decide's view is the one of the analyzer before the fix (the
// arithmetic and the test are taken as harmless).
func TestBashDifferentialCatches(t *testing.T) {
	s := needBashSandbox(t)
	for _, command := range []string{`x='a[$(touch f)]'; ((x)); ls`, `[[ 'a[$(rm -f f)]' -eq 0 ]]; ls`} {
		r, err := s.run(command, diffLimit)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.execs) != 2 {
			t.Fatalf("%q ran %q, want the hidden command and ls", command, r.execs)
		}
		// What the analyzer saw before: only ls.
		if problems := checkDifferential("ls", r); len(problems) == 0 {
			t.Errorf("%q: ran %q, and the check finds nothing wrong with allowing it as ls", command, r.execs)
		}
	}
}

// FuzzBashDifferential drives the differential check with generated
// command lines: a line of the corpus of TestBashDifferential (mutated),
// followed by the fragments gen picks from genForms and genValues (the
// ways to reach arithmetic and name lookups, with values that evaluate or
// not). Run it with -parallel 1 on a small machine:
//
//	go test ./config -run '^$' -fuzz FuzzBashDifferential -fuzztime 10m -parallel 1
func FuzzBashDifferential(f *testing.F) {
	s := needBashSandbox(f)
	if fl := flag.Lookup("test.fuzz"); fl == nil || fl.Value.String() == "" {
		// Not fuzzing: TestBashDifferential runs the corpus already;
		// only the inputs under testdata/fuzz run here.
		f.Fuzz(func(t *testing.T, command string, gen []byte) { runDifferential(t, s, generated(command, gen)) })
		return
	}
	for _, c := range decideBashCases {
		if !strings.Contains(c.command, "while true") {
			f.Add(c.command, []byte(nil))
		}
	}
	for i, c := range arithmeticCorpus {
		f.Add(c, []byte{byte(i), byte(i * 7), byte(i * 13), byte(i * 3)})
	}
	f.Fuzz(func(t *testing.T, command string, gen []byte) {
		command = generated(command, gen)
		if len(command) > 1024 || strings.ContainsRune(command, 0) {
			return // an argument cannot hold NUL; long lines add nothing
		}
		runDifferential(t, s, command)
	})
}

// genForms are the contexts generated() fills with a value: arithmetic,
// subscripts, names that builtins look up, and plain commands.
var genForms = []string{
	"((%s))", "[[ %s -eq 0 ]]", "[[ 1 -lt %s ]]", "let %s", "echo $((%s))", "echo $[%s]", "echo ${a[%s]}",
	"echo ${#a[%s]}", "echo ${q:%s}", "echo ${q:0:%s}", "a[%s]=1", "a=([%s]=1)", "declare -i q=%s", "declare q=%s",
	"declare %s", "typeset -a q=([%s]=1)", "f() { local q=%s; }; f", "printf -v %s x", "read %s <<< 1", "read -a %s <<< 1",
	"test -v %s", "[ -v %s ]", "[[ -v %s ]]", "unset %s", "mapfile -O %s q <<< 1", "readarray %s <<< 1", "shift %s",
	"printf %d %s", "export %s", "q=%s; ((q))", "for ((q=%s; q<1; q++)); do :; done", "for q in %s; do ((q)); done",
	"echo ${!%s}", "case %s in *) ls;; esac", "[ %s -eq 1 ]", "test %s -gt 1", "sleep 0 & wait -n -p %s", "getopts a %s -a",
	": ${%s:=1}", "eval %s", "bash -c %s", "builtin %s", "command %s", "ls %s", "echo %s", "(exit %s)",
	"cat <<E\n$((%s))\nE", "x=%s", "OPTIND=%s", "echo ${%s@P}", "declare -n r=%s; echo $r", "q=%s; echo ${!q}",
	"set -- %s; ((${1}))", "echo \"${q-$((%s))}\"", "coproc %s", "exec {%s}>/dev/null", "trap %s EXIT",
}

// genValues are what generated() puts in a form.
var genValues = []string{
	"x", "q", "a", "'a[$(touch f)]'", "\"a[\\$(touch f)]\"", "a[x]", "'a[x]'", "a[0]", "1", "0x1f", "16#f", "x+1", "-v",
	"$#", "$?", "$x", "\"$x\"", "${x}", "${#x}", "OPTIND", "RANDOM", "$((x))", "$((1))", "'$(touch f)'", "'((x))'",
	"'let x'", "'[[ x -eq 1 ]]'", "'a[$(rm -f g)]'", "$(ls)", "`ls`", "\"$(echo x)\"", "'x'", "\\x", "${a[@]}", "@",
	"'a[1]'", "\"a[$x]\"", "'$x'", "'${x}'", "y", "-1", "' x '",
}

// generated appends to command the fragments gen picks: each pair of
// bytes is a form of genForms and a value of genValues, and a third
// byte (when there) the separator.
func generated(command string, gen []byte) string {
	seps := []string{"; ", " && ", " || ", " | ", "\n"}
	var b strings.Builder
	b.WriteString(command)
	for i := 0; i+1 < len(gen) && i < 24; i += 3 {
		if b.Len() > 0 {
			sep := seps[0]
			if i+2 < len(gen) {
				sep = seps[int(gen[i+2])%len(seps)]
			}
			b.WriteString(sep)
		}
		form := genForms[int(gen[i])%len(genForms)]
		b.WriteString(strings.Replace(form, "%s", genValues[int(gen[i+1])%len(genValues)], 1))
	}
	return b.String()
}
