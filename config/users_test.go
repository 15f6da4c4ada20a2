package config

import (
	"strings"
	"testing"
)

// TestUsersProblemReportedOnce: web.users and handoff.users share one
// check (checkUsers), and a name already reported (here: from a variable
// that is not set) is not reported again as a duplicate in either list.
func TestUsersProblemReportedOnce(t *testing.T) {
	const tok = "0123456789abcdef"
	for _, tc := range []struct {
		name string
		doc  []byte
	}{
		{"web.users", webDoc("http: {listen: 127.0.0.1:9464}", "web:", "  users:",
			`    - { name: "${NOPE}", token: `+tok+"1 }",
			`    - { name: "${NOPE}", token: `+tok+"2 }")},
		{"handoff.users", withRetention("handoff:", "  users:",
			`    - { name: "${NOPE}", token: `+tok+"1, as: { phone: x } }",
			`    - { name: "${NOPE}", token: `+tok+"2, as: { phone: y } }")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := problemsOf(t, tc.doc, nil)
			if len(got) != 2 {
				t.Fatalf("got %d problems, want the 2 unset variables:\n%s", len(got), fmtProblems(got))
			}
			for i, p := range got {
				if want := tc.name + "[" + string(rune('0'+i)) + "].name"; p.Path != want || !strings.Contains(p.Msg, "NOPE is not set") {
					t.Errorf("problem %d = %s; want %s: NOPE is not set", i, p, want)
				}
			}
		})
	}
}
