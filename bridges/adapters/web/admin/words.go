package admin

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// This file says in words what the operator pages show: a tool input, a
// decision, a duration, a size.

// toolSubject is the short form of a tool input for a table cell: a Bash
// command, a file path or URL, a question, else the JSON.
func toolSubject(input []byte) string {
	var m map[string]any
	if json.Unmarshal(input, &m) == nil {
		if qs, ok := m["questions"].([]any); ok {
			var texts []string
			for _, q := range qs {
				if q, ok := q.(map[string]any); ok {
					if s, ok := q["question"].(string); ok {
						texts = append(texts, s)
					}
				}
			}
			if len(texts) > 0 {
				return textcut.Truncate(strings.Join(texts, " · "), 300)
			}
		}
		if plan, ok := m["plan"].(string); ok {
			return textcut.Truncate(textcut.OneLine(plan, 300), 300)
		}
		for _, k := range []string{"command", "file_path", "path", "url", "pattern"} {
			if s, ok := m[k].(string); ok {
				return textcut.Truncate(s, 300)
			}
		}
	}
	return textcut.Truncate(string(input), 300)
}

// roundDur renders d to the second (to the minute past an hour).
func roundDur(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d >= time.Hour {
		return d.Round(time.Minute).String()
	}
	return d.Round(time.Second).String()
}

// megabytes renders a byte count as MB, "?" when unknown.
func megabytes(n int64) string {
	if n <= 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f MB", float64(n)/1e6)
}

// urlQuery escapes s (truncated) for a query value.
func urlQuery(s string) string { return url.QueryEscape(textcut.Truncate(s, 300)) }

// decisionWords says in words what was decided on a request: a question's
// answer ("answered: Postgres"), a plan approved or rejected, a tool call
// allowed once, always, denied, or closed without a decision.
func decisionWords(a store.Approval) string {
	allowed := a.Decision == store.DecisionAllow || a.Decision == store.DecisionAlways
	switch {
	case a.ToolName == "AskUserQuestion" && allowed:
		var answers map[string]string
		if json.Unmarshal([]byte(a.Message), &answers) == nil && len(answers) > 0 {
			vals := make([]string, 0, len(answers))
			for _, q := range slices.Sorted(maps.Keys(answers)) {
				vals = append(vals, answers[q])
			}
			return "answered: " + textcut.Truncate(strings.Join(vals, "; "), 200)
		}
		return "answered"
	case a.ToolName == "ExitPlanMode" && allowed:
		return "plan approved"
	case a.ToolName == "ExitPlanMode" && a.Decision == store.DecisionDeny:
		return "plan rejected"
	}
	switch a.Decision {
	case store.DecisionAllow:
		return "allowed once"
	case store.DecisionAlways:
		return "always allowed (a rule for the conversation)"
	case store.DecisionDeny:
		return "denied"
	case store.DecisionTimeout:
		return "denied: nobody answered in time"
	case store.DecisionCancelled:
		return "withdrawn by the agent"
	case store.DecisionRuleAllow:
		return "allowed by a policy rule"
	case store.DecisionRuleDeny:
		return "denied by a policy rule"
	case store.DecisionGrant:
		return "allowed by an earlier “always allow”"
	case store.DecisionExpired:
		return "closed: the agent stopped"
	}
	return string(a.Decision)
}
