package grants

import (
	"fmt"
	"strings"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/config/policy"
	"github.com/agentbridge/agentbridge/store"
)

// ListText is what "!rules" shows: agent's policy rules (in order: the
// first match wins), then the conversation's active grants gs, or a note
// that they could not be read (readFailed), then how grants are removed
// (admins: the bot has admins).
func ListText(agent string, rules []policy.Rule, gs []store.Grant, readFailed, admins bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "📜 **Policy rules** of agent %s (the first match wins):\n", render.CodeSpan(agent))
	if len(rules) == 0 {
		b.WriteString("_none: every request not covered by the permission mode asks_\n")
	}
	for i, r := range rules {
		fmt.Fprintf(&b, "%d. %s %s\n", i+1, r.Action, render.CodeSpan(RuleText(r)))
	}
	b.WriteString("**Grants of this conversation** (from Always allow; checked after the policy rules):\n")
	switch {
	case readFailed:
		b.WriteString("⚠️ _could not read the grants (database error)_\n")
	case len(gs) == 0:
		b.WriteString("_none_\n")
	}
	for _, g := range gs {
		fmt.Fprintf(&b, "#%d allow %s — granted by %s on %s\n", g.Num, render.CodeSpan(RuleText(Rule(g))),
			render.Mention("", g.GrantedBy), g.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"))
	}
	if admins {
		b.WriteString("_Admins remove a grant with `" + bridges.CommandPrefix + "rules rm N`._")
	} else {
		b.WriteString("_Removing grants needs admins, and this bot has none configured._")
	}
	return b.String()
}

// StoredText says what grants were stored, for the audit log ("granted
// #1 Bash \"git push *\"") and for the card (" (conversation rule #1;
// !rules lists it)").
func StoredText(stored []store.Grant) (audit, status string) {
	var parts, nums []string
	for _, g := range stored {
		parts = append(parts, fmt.Sprintf("#%d %s", g.Num, RuleText(Rule(g))))
		nums = append(nums, fmt.Sprintf("#%d", g.Num))
	}
	return "granted " + strings.Join(parts, ", "),
		" (conversation rule " + strings.Join(nums, ", ") + "; " + bridges.CommandPrefix + "rules lists it)"
}
