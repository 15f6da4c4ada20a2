package policy

import (
	"fmt"
	"strings"
	"testing"
)

// The generated cases of issue 40: a program reached through wrappers,
// with assignments written before them, named by a path, inside every
// clause of an arithmetic for. Each case's verdict follows from its parts,
// so the whole product is checked, not a few examples.

// genWrappers run the command %s; shell code is quoted by the form.
var genWrappers = []string{
	"%s", "env %s", "env -- %s", "nice %s", "nice -n 5 %s", "nohup %s", "timeout 5 %s", "stdbuf -o0 %s",
	"setsid %s", "ionice -c 3 %s", "command %s", "builtin %s", "time %s", "exec %s", "bash -c '%s'", "sh -c '%s'",
	"eval '%s'", "env nice %s", "nice env %s", "timeout 5 bash -c '%s'", "bash -c 'nice %s'",
}

// genPrefixes are written before the wrapper: harmless (none) or an
// environment the wrapped program reads.
var genPrefixes = []string{"", "LD_PRELOAD=/tmp/x.so ", "PATH=/tmp/evil ", "GIT_DIR=/tmp/g ", "FOO=1 BASH_ENV=/tmp/e "}

// genPrograms name ls (allowed by "ls *") or something that may be any
// program: a path under /proc or /dev.
var genPrograms = []struct {
	name string
	kind int // named: ls as the allow rule names it; sysPath: ls by its path (denied as ls, allowed only by *); anyProgram
}{
	{"ls", named}, {"\\ls", named}, {"/bin/ls", sysPath}, {"/usr/bin/ls", sysPath},
	{"/dev/stdin", anyProgram}, {"/dev/fd/0", anyProgram}, {"/dev/fd/3", anyProgram}, {"//dev/stdin", anyProgram}, {"/usr/../dev/fd/0", anyProgram},
	{"/proc/self/exe", anyProgram}, {"/proc/self/fd/0", anyProgram}, {"/proc/1/root/bin/ls", anyProgram},
}

const (
	named = iota
	sysPath
	anyProgram
)

// genWrapped yields every wrapper × prefix × program as a command line
// that runs the program with the argument -la.
func genWrapped(yield func(line, prefix string, kind int)) {
	for _, w := range genWrappers {
		for _, p := range genPrefixes {
			for _, prog := range genPrograms {
				if strings.Contains(w, "'") && strings.Contains(prog.name, "\\") {
					continue // a backslash inside single quotes is another word
				}
				yield(p+fmt.Sprintf(w, prog.name+" -la"), p, prog.kind)
			}
		}
	}
}

// TestDecideWrappedGenerated: with only "ls *" allowed, a line is allowed
// exactly when it runs ls under no environment of its own; with ls also
// denied, every line that runs ls (or may: a program under /dev or /proc)
// is refused; with everything allowed, a program under /dev or /proc is
// still asked.
func TestDecideWrappedGenerated(t *testing.T) {
	allowLs := []Rule{{Tool: "Bash", Match: "ls *", Action: ActionAllow}}
	denyLs := []Rule{{Tool: "Bash", Match: "ls *", Action: ActionDeny}, {Tool: "Bash", Match: "*", Action: ActionAllow}}
	star := []Rule{{Tool: "Bash", Match: "*", Action: ActionAllow}}
	n := 0
	genWrapped(func(line, prefix string, kind int) {
		n++
		plain := kind != anyProgram
		v := Decide(allowLs, "Bash", line)
		if want := kind == named && prefix == ""; (v.Action == ActionAllow) != want {
			t.Errorf("allow ls *: Decide(%q) = %+v, want allowed %v", line, v, want)
		}
		v = Decide(denyLs, "Bash", line)
		if plain && v.Action != ActionDeny {
			t.Errorf("deny ls *: Decide(%q) = %+v, want deny", line, v)
		}
		if !plain && v.Action == ActionAllow {
			t.Errorf("deny ls *: Decide(%q) = %+v, a program under /dev or /proc allowed", line, v)
		}
		v = Decide(star, "Bash", line)
		if !plain && v.Action != ActionAsk {
			t.Errorf("allow *: Decide(%q) = %+v, want ask for a program under /dev or /proc", line, v)
		}
		if plain && prefix == "" && v.Action != ActionAllow {
			t.Errorf("allow *: Decide(%q) = %+v, want allow", line, v)
		}
	})
	if n < 800 {
		t.Fatalf("only %d generated lines", n)
	}
}

// arithForClauses put a non-constant expression in one clause of a
// C-style for and constants in the others.
var arithForClauses = []string{
	"for ((x; 0; )); do :; done; ls",
	"for ((i=x; 0; )); do :; done; ls",
	"for ((a[$(touch f)]; 0; )); do :; done; ls",
	"for ((; x; )); do break; done; ls",
	"for ((; 0 < x; )); do break; done; ls",
	"for ((; $(touch f); )); do break; done; ls",
	"for ((; 1; x)); do break; done; ls",
	"for ((; 1; x++)); do break; done; ls",
	"for ((; 1; a[$(touch f)]=1)); do break; done; ls",
	"for ((x; x; x)); do break; done; ls",
}

// TestDecideArithForClauses: each clause of for ((init; cond; step)) is
// analysed on its own: a variable or an expansion in any one of them
// makes the line not understood under "ls *" (asked, never allowed), and
// constants in all three are understood.
func TestDecideArithForClauses(t *testing.T) {
	rules := allowRules("ls touch : break")
	for _, line := range arithForClauses {
		if v := Decide(rules, "Bash", line); v.Action != ActionAsk {
			t.Errorf("Decide(%q) = %+v, want ask (arithmetic with a variable or an expansion)", line, v)
		}
	}
	for _, line := range []string{"for ((1; 0; 2)); do :; done; ls", "for ((;0;)); do :; done; ls", "for ((1+2; 0; 3*4)); do :; done; ls"} {
		if v := Decide(rules, "Bash", line); v.Action != ActionAllow {
			t.Errorf("Decide(%q) = %+v, want allow (constants only)", line, v)
		}
	}
}

// TestBashDifferentialWrapped runs a fifth of the generated lines (every
// wrapper with every program path once, the prefixes in turn) and the
// arithmetic for clauses under the real Bash (see checkDifferential).
func TestBashDifferentialWrapped(t *testing.T) {
	s := needBashSandbox(t)
	var corpus []string
	i := 0
	genWrapped(func(line, prefix string, kind int) {
		if i%len(genPrefixes) == 0 { // every wrapper with every program once
			corpus = append(corpus, line)
		}
		i++
	})
	corpus = append(corpus, arithForClauses...)
	for _, command := range corpus {
		runDifferential(t, s, command)
	}
}
