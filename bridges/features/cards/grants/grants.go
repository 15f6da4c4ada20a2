// Package grants holds the decisions of "Always allow": which of the CLI's
// permission suggestions a click may keep (AlwaysPermissions), how a CLI
// rule becomes a stored grant (FromCLIRule), and how a request is decided
// by a profile's policy rules and then a conversation's grants (Decide),
// so that a grant never beats a profile rule. It is pure: bridges/core
// reads and stores the grants.
//
// "Always allow" in the bridge: the click stores one grant per rule the CLI
// suggested, scoped to the conversation (table grants), and the CLI gets the
// same rules for its running session only (destination "session"), so it
// never writes permission rules into the workspace's or the user's settings
// files. Later requests of the conversation that match a grant are allowed
// by the bridge without a card, across eviction, resume and restart.
package grants

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentbridge/agentbridge/config/policy"
	"github.com/agentbridge/agentbridge/store"
)

// Decide decides a request of a conversation by policy: the
// profile's rules first (a deny, an allow or an explicit ask rule there is
// final), then the conversation's grants. grant is the grant that allowed
// the request, or nil when the profile decided or nothing did. A Verdict
// without Action means no rule applies: the request needs a card.
//
// Bash grants mean what the CLI's rule meant: "npm test:*" became the
// command pattern "npm test *" (see docs/rules.md), evaluated after the
// profile's rules by policy.Decide; any other grant allows exactly the
// command line that was allowed, nothing else.
func Decide(profile []policy.Rule, grants []store.Grant, tool, subject string) (v policy.Verdict, grant *store.Grant) {
	pv := policy.Decide(profile, tool, subject)
	if pv.Action == policy.ActionAllow || pv.Action == policy.ActionDeny || pv.Rule.Action == policy.ActionAsk {
		return pv, nil
	}
	for i, g := range grants {
		if g.Tool == "Bash" && tool == "Bash" && strings.TrimSpace(g.Match) == strings.TrimSpace(subject) {
			return policy.Verdict{Action: policy.ActionAllow, Rule: Rule(g), Why: "the exact command was allowed"}, &grants[i]
		}
	}
	var rules []policy.Rule
	var from []int // grant index of each rule
	for i, g := range grants {
		if patternGrant(g) {
			rules = append(rules, Rule(g))
			from = append(from, i)
		}
	}
	if len(rules) == 0 {
		return pv, nil
	}
	gv := policy.Decide(append(slices.Clip(profile), rules...), tool, subject)
	if gv.Action != policy.ActionAllow {
		return pv, nil
	}
	for j, r := range rules {
		if r == gv.Rule {
			return gv, &grants[from[j]]
		}
	}
	// Several rules allowed the parts of a command together; the profile
	// alone did not, so a grant was needed: name the first that helps.
	for j, r := range rules {
		if policy.Decide(append(slices.Clip(profile), r), tool, subject).Action == policy.ActionAllow {
			return gv, &grants[from[j]]
		}
	}
	return gv, &grants[from[0]]
}

// patternGrant reports whether g is matched as a rule: grants of tools
// other than Bash (globs over the subject) and Bash prefix grants ("git
// push *"). Other Bash grants allow only their exact command line.
func patternGrant(g store.Grant) bool {
	if g.Tool != "Bash" {
		return true
	}
	return strings.HasSuffix(g.Match, " *") && policy.CheckBashPattern(g.Match) == nil
}

// Rule is grant g as an allow rule.
func Rule(g store.Grant) policy.Rule {
	return policy.Rule{Tool: g.Tool, Match: g.Match, Action: policy.ActionAllow}
}

// ruleText describes a rule for the audit log and chat: Bash "git push *".
func RuleText(r policy.Rule) string {
	if r.Match == "" {
		return r.Tool
	}
	return r.Tool + " " + fmt.Sprintf("%q", r.Match)
}
