package commands

import (
	"context"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/core/worker"
)

// caseVariants are ways of writing word in other cases.
func caseVariants(word string) []string {
	title := strings.ToUpper(word[:1]) + word[1:]
	var mixed strings.Builder
	for i, r := range word {
		if i%2 == 1 {
			mixed.WriteString(strings.ToUpper(string(r)))
		} else {
			mixed.WriteRune(r)
		}
	}
	return []string{word, strings.ToUpper(word), title, mixed.String()}
}

// TestCommandCaseSameForAuthorityAndDispatch: a command name (and the
// argument that makes a command admin-only) in any case is the same
// command: parsed to the lower-case name, run by the same handler and
// refused to the same people as in lower case, for every command of the
// table and every kind of author.
func TestCommandCaseSameForAuthorityAndDispatch(t *testing.T) {
	ctx := context.Background()
	f := newFakeConv(t)
	for _, cmd := range testTable.cmds {
		lines := []string{cmd.Name}
		if cmd.AdminArg != "" {
			lines = append(lines, cmd.Name+" "+cmd.AdminArg+" 1")
		}
		for _, line := range lines {
			ref, p := testTable.Parse("!" + line)
			if p != OK || ref.Name != cmd.Name {
				t.Fatalf("testTable.Parse(%q) = %+v, %v", "!"+line, ref, p)
			}
			for _, user := range []string{"bob", "dave"} { // a stranger, an admin
				want := testTable.refusal(ctx, f, "m1", worker.Person{ID: user}, ref)
				for _, v := range caseVariants(line) {
					l, p := testTable.Parse("!" + v)
					if p != OK || l.Name != cmd.Name {
						t.Errorf("testTable.Parse(%q) = %+v, %v; want the command %s", "!"+v, l, p, cmd.Name)
						continue
					}
					if _, ok := testTable.lookup(l.Name); !ok {
						t.Errorf("%q: no handler for %q", v, l.Name)
					}
					if got := testTable.refusal(ctx, f, "m1", worker.Person{ID: user}, l); got != want {
						t.Errorf("%q by %s: refusal %q, want %q as for %q", v, user, got, want, line)
					}
				}
			}
		}
	}
	// The admin argument in any case needs an admin.
	for _, v := range caseVariants("rm") {
		l, _ := testTable.Parse("!rules " + v + " 1")
		if got := testTable.refusal(ctx, f, "m1", worker.Person{ID: "bob"}, l); got != "⛔ !rules rm is for admins only." {
			t.Errorf("!rules %s 1 by a non-admin: refusal %q", v, got)
		}
	}
}
