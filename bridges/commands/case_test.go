package commands

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/store"
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
	for _, cmd := range table() {
		lines := []string{cmd.name}
		if cmd.adminArg != "" {
			lines = append(lines, cmd.name+" "+cmd.adminArg+" 1")
		}
		for _, line := range lines {
			ref, p := Parse("!" + line)
			if p != OK || ref.Name != cmd.name {
				t.Fatalf("Parse(%q) = %+v, %v", "!"+line, ref, p)
			}
			for _, user := range []string{"bob", "dave"} { // a stranger, an admin
				want := refusal(ctx, f, "m1", Author{ID: user}, ref)
				for _, v := range caseVariants(line) {
					l, p := Parse("!" + v)
					if p != OK || l.Name != cmd.name {
						t.Errorf("Parse(%q) = %+v, %v; want the command %s", "!"+v, l, p, cmd.name)
						continue
					}
					if _, ok := lookup(l.Name); !ok {
						t.Errorf("%q: no handler for %q", v, l.Name)
					}
					if got := refusal(ctx, f, "m1", Author{ID: user}, l); got != want {
						t.Errorf("%q by %s: refusal %q, want %q as for %q", v, user, got, want, line)
					}
				}
			}
		}
	}
	// The admin argument in any case needs an admin.
	for _, v := range caseVariants("rm") {
		l, _ := Parse("!rules " + v + " 1")
		if got := refusal(ctx, f, "m1", Author{ID: "bob"}, l); got != "⛔ !rules rm is for admins only." {
			t.Errorf("!rules %s 1 by a non-admin: refusal %q", v, got)
		}
	}
}

// TestScheduleSubcommandCase: "!schedule RM N" removes like "rm".
func TestScheduleSubcommandCase(t *testing.T) {
	ctx := context.Background()
	for _, v := range caseVariants("rm")[1:] {
		f := newFakeConv(t)
		sc, err := f.st.AddSchedule(ctx, store.Schedule{Source: store.ScheduleFromChat, Name: "mine",
			Key: store.ConversationKey(f.key), Cron: "0 9 * * *", TZ: "UTC", Prompt: "x", CreatedBy: "alice", ConversationID: "conv-1"})
		if err != nil {
			t.Fatal(err)
		}
		l, _ := Parse("!schedule " + v + " " + strconv.FormatInt(sc.ID, 10))
		Run(ctx, f, "m1", Author{ID: "alice"}, l)
		if len(f.removed) != 1 || len(f.notices) != 1 || !strings.HasPrefix(f.notices[0], "🗑 Removed schedule #") {
			t.Errorf("!schedule %s: notices %q, removed %v", v, f.notices, f.removed)
		}
	}
}
