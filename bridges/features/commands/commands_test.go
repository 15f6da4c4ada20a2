package commands

import (
	"context"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/core/worker"
)

func (f *fakeConv) StopTurn(context.Context) (bool, error) { return false, nil }
func (f *fakeConv) Agents() ([]string, string)             { return []string{"default", "other"}, "default" }

// TestAuthority: Run refuses a command to an author without its authority
// and says why, and runs it for one who has it: participant commands for
// someone who never wrote here, admin commands (and "!rules rm") for a
// non-admin, admin commands for everyone when the bot has no admins, and
// "!agent NAME" (which moves the conversation) for someone who never
// wrote here, while the listing "!agent" is anyone's.
func TestAuthority(t *testing.T) {
	tests := []struct {
		name, user, text string
		noAdmins         bool
		want             string
	}{
		{"participant command, stranger to the thread", "bob", "!stop", false, "⛔ !stop is for the people taking part in this conversation and admins."},
		{"participant command, admin", "dave", "!stop", false, "Nothing to stop."},
		{"admin command, non-admin", "bob", "!model x", false, "⛔ !model is for admins only."},
		{"admin argument, non-admin", "bob", "!rules rm 1", false, "⛔ !rules rm is for admins only."},
		{"agent move, stranger to the thread", "bob", "!agent other", false, "⛔ !agent is for the people taking part in this conversation and admins."},
		{"admin command, no admins", "dave", "!mode plan", true,
			"⛔ !mode is disabled: this bot has no admins. Admins must be configured (access.admins) to use it."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeConv(t)
			if tt.noAdmins {
				f.bot.Access.Admins = nil
			}
			l, p := testTable.Parse(tt.text)
			if p != OK {
				t.Fatalf("testTable.Parse(%q) = %v", tt.text, p)
			}
			testTable.Run(context.Background(), f, "m1", worker.Person{ID: tt.user}, l)
			if len(f.notices) != 1 || f.notices[0] != tt.want {
				t.Errorf("%s by %s: notices %q, want %q", tt.text, tt.user, f.notices, tt.want)
			}
		})
	}
}

// TestAgentListAnyone: "!agent" without a name only lists the profiles,
// so anyone who may talk to the bot may run it.
func TestAgentListAnyone(t *testing.T) {
	f := newFakeConv(t)
	l, _ := testTable.Parse("!agent")
	testTable.Run(context.Background(), f, "m1", worker.Person{ID: "bob"}, l)
	if len(f.notices) != 1 || !strings.Contains(f.notices[0], "• `default` (default) ← this conversation\n• `other`") {
		t.Errorf("!agent by bob: notices %q", f.notices)
	}
}
