package admin

import (
	"testing"

	"github.com/agentbridge/agentbridge/store"
)

// The audit log says what was decided in words, and shows a question or a
// plan rather than the tool's JSON.
func TestDecisionWords(t *testing.T) {
	ask := `{"questions":[{"question":"Which database?","options":[{"label":"Postgres"},{"label":"MySQL"}]}]}`
	cases := []struct {
		a           store.Approval
		words, what string
	}{
		{store.Approval{ToolName: "AskUserQuestion", Input: []byte(ask), Decision: store.DecisionAllow, Message: `{"Which database?":"Postgres"}`},
			"answered: Postgres", "Which database?"},
		{store.Approval{ToolName: "AskUserQuestion", Input: []byte(ask), Decision: store.DecisionTimeout}, "denied: nobody answered in time", "Which database?"},
		{store.Approval{ToolName: "ExitPlanMode", Input: []byte(`{"plan":"1. Add the index\n2. Migrate"}`), Decision: store.DecisionAllow}, "plan approved", "1. Add the index 2. Migrate"},
		{store.Approval{ToolName: "ExitPlanMode", Input: []byte(`{}`), Decision: store.DecisionDeny}, "plan rejected", "{}"},
		{store.Approval{ToolName: "Bash", Input: []byte(`{"command":"make test"}`), Decision: store.DecisionAllow}, "allowed once", "make test"},
		{store.Approval{ToolName: "Bash", Input: []byte(`{"command":"rm -rf /"}`), Decision: store.DecisionDeny, Message: "Denied by @ana"}, "denied", "rm -rf /"},
		{store.Approval{ToolName: "Edit", Input: []byte(`{"file_path":"/srv/a.go"}`), Decision: store.DecisionAlways}, "always allowed (a rule for the conversation)", "/srv/a.go"},
		{store.Approval{ToolName: "Bash", Input: []byte(`{"command":"ls"}`), Decision: store.DecisionRuleAllow}, "allowed by a policy rule", "ls"},
		{store.Approval{ToolName: "Bash", Input: []byte(`{"command":"ls"}`), Decision: store.DecisionExpired}, "closed: the agent stopped", "ls"},
	}
	for _, tc := range cases {
		if got := decisionWords(tc.a); got != tc.words {
			t.Errorf("decisionWords(%s %s %q) = %q, want %q", tc.a.ToolName, tc.a.Decision, tc.a.Message, got, tc.words)
		}
		if got := toolSubject(tc.a.Input); got != tc.what {
			t.Errorf("toolSubject(%s) = %q, want %q", tc.a.Input, got, tc.what)
		}
	}
}
