package config

import (
	"strings"
	"testing"
)

// TestBashPatternProblems: Load reports a Bash pattern that does not
// compile, with its line, for rules whose tool covers Bash only.
func TestBashPatternProblems(t *testing.T) {
	doc := func(rule string) []byte {
		return src("agents:", "  coder:", "    rules:", "      - "+rule,
			"bots:", "  - name: b", "    platform: discord", "    agent: coder", "    discord: {token: tok}")
	}
	bad := []struct{ rule, msg string }{
		{`{tool: Bash, match: "git status; rm x", action: allow}`, `bad pattern "git status; rm x": must be one simple command`},
		{`{tool: "*", match: "a && b", action: deny}`, "a Bash command pattern, see docs/rules.md"},
		{`{tool: Bash, match: "echo $(ls)", action: allow}`, "literal words"},
		{`{tool: Bash, match: "ls ${PAT}", action: allow}`, "not a valid command pattern"},
	}
	for _, tc := range bad {
		ps := problemsOf(t, doc(tc.rule), map[string]string{"PAT": "$(secret-value"})
		if len(ps) != 1 || ps[0].Line != 4 || ps[0].Path != "agents.coder.rules[0].match" || !strings.Contains(ps[0].Msg, tc.msg) {
			t.Errorf("%s: problems:\n%s\nwant one at 4 agents.coder.rules[0].match containing %q", tc.rule, fmtProblems(ps), tc.msg)
		}
		for _, p := range ps {
			if strings.Contains(p.Msg, "secret-value") {
				t.Errorf("problem leaks the expanded value: %s", p.Msg)
			}
		}
	}
	for _, rule := range []string{
		`{tool: Read, match: "a && b", action: allow}`,
		`{tool: Bash, match: "echo '['", action: allow}`,
		`{tool: Bash, match: "git status *", action: allow}`,
	} {
		mustParse(t, doc(rule), nil)
	}
}
