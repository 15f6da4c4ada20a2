package policy

import (
	"strings"
	"testing"
)

// TestDecideArithmeticAsked: under the rules of issue 20's attack (rm
// denied, ls allowed), every form that makes Bash evaluate a value as
// arithmetic, or look a name up with its subscript, is asked as not
// understood; constants stay allowed.
func TestDecideArithmeticAsked(t *testing.T) {
	rules := diffRuleSets["attack"]
	asked := []string{
		`x='a[$(touch f)]'; ((x)); ls`, `[[ 'a[$(rm -f f)]' -eq 0 ]]; ls`, `let 'a[$(touch f)]'; ls`,
		`for q in 'a[$(touch f)]'; do ((q)); done; ls`, `printf -v 'a[$(touch f)]' x; ls`, `test -v 'a[$(touch f)]'; ls`,
		`((x)); ls`, `echo $((x)); ls`, `echo $[x]; ls`, `[[ 1 -ne y ]]; ls`, `[[ 1 -lt y ]]; ls`, `[[ 1 -le y ]]; ls`,
		`[[ 1 -gt y ]]; ls`, `[[ 1 -ge y ]]; ls`, `[[ $x -eq 1 ]]; ls`, `declare -i q=1; ls`, `typeset -i q; ls`,
		`f() { local -i q; }; ls`, `declare -a q=([x]=1); ls`, `declare -A m; ls`, `declare -n r=x; ls`, `a[x]=1; ls`,
		`a=([x]=1); ls`, `echo ${a[x]}; ls`, `echo ${#a[x]}; ls`, `echo ${q:x}; ls`, `echo ${q:0:x}; ls`,
		`for ((i=0; i<3; i++)); do :; done; ls`, `unset 'a[0]'; ls`, `wait -p 'a[$(touch f)]'; ls`,
		`mapfile -C 'touch f' q; ls`, `mapfile -O x q; ls`, `read 'a[$(touch f)]'; ls`, `read -a 'a[0]'; ls`,
		`[ -v 'a[0]' ]; ls`, `test -R 'a[0]'; ls`, `[[ -v a[0] ]]; ls`, `shift x; ls`, `return "$x"; ls`, `exit $x; ls`,
		`echo ${!x}; ls`, `echo ${x@P}; ls`, `OPTIND=x; ls`, `read OPTIND; ls`, `select q in a; do :; done; ls`,
		`exec {a[0]}>/dev/null; ls`, `declare "$q"; ls`, `printf "$fmt" x; ls`, `[ $x ]; ls`, `alias ls=rm; ls`,
		`hash -p /bin/rm ls; ls`, `enable -f x.so x; ls`, `set -x; ls`, `set -k; ls`, `shopt -s expand_aliases; ls`,
		`fc -s; ls`, `history -w f; ls`, `compgen -C 'touch f' x; ls`, `builtin let x; ls`, `command printf -v 'a[0]' x; ls`,
		`eval '((x))'; ls`, `bash -c '[[ x -eq 1 ]]'; ls`,
	}
	for _, c := range asked {
		if v := Decide(rules, "Bash", c); v.Action != ActionAsk || !strings.Contains(v.Why, "not understood") {
			t.Errorf("Decide(%q) = %+v, want ask: not understood", c, v)
		}
	}
	allowed := []string{
		`ls $((1+2)) $[3*4] $((16#ff)) $((0x1f)) ${#x} $# ${a[0]} ${a[@]} ${#a[@]} ${q:1:2}`,
		`((1)) && [[ 1 -eq 1 ]] && [[ $# -eq 0 ]] && [[ "$?" -ne 1 ]] && ls`, `x=$((1)); ls "$x"`, `a[0]=1; ls`,
	}
	for _, c := range allowed {
		if v := Decide(rules, "Bash", c); v.Action != ActionAllow {
			t.Errorf("Decide(%q) = %+v, want allow", c, v)
		}
	}
}
