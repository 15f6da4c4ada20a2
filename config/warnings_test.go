package config

import (
	"strings"
	"testing"
)

// TestWarningsUnknownWebUser: an access list of a web bot naming someone
// not in web.users is pointed out (the entry never matches); names in
// web.users, in any case, and other platforms' bots are not.
func TestWarningsUnknownWebUser(t *testing.T) {
	c := mustParse(t, src(
		"agents: {coder: {}}",
		"bots:",
		"  - name: console",
		"    platform: web",
		"    agent: coder",
		"    access: {users: [ana, Bob, carol], approvers: [dave], admins: [ana]}",
		"web:",
		"  users:",
		`    - { name: ana, token: "0123456789abcdef" }`,
		`    - { name: bob, token: "fedcba9876543210" }`,
	), nil)
	w := c.Warnings()
	if len(w) != 2 || !strings.HasPrefix(w[0], `bots[0].access.users: "carol" is not in web.users`) ||
		!strings.HasPrefix(w[1], `bots[0].access.approvers: "dave" is not in web.users`) || !strings.Contains(w[1], "web.users has ana, bob") {
		t.Errorf("warnings = %q", w)
	}
	if w := mustParse(t, webDoc("web:", "  users:", `    - { name: ana, token: "0123456789abcdef" }`), nil).Warnings(); len(w) != 0 {
		t.Errorf("warnings without access lists = %q", w)
	}
}
