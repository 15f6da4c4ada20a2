package core

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/agentbridge/agentbridge/bridges/render"
	"slices"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/policy"
	"github.com/agentbridge/agentbridge/store"
)

// "Always allow" in the bridge: the click stores one grant per rule the CLI
// suggested, scoped to the conversation (table grants), and the CLI gets the
// same rules for its running session only (destination "session"), so it
// never writes permission rules into the workspace's or the user's settings
// files. Later requests of the conversation that match a grant are allowed
// by the bridge without a card, across eviction, resume and restart.

// decidePolicy decides a request of a conversation by policy: the
// profile's rules first (a deny, an allow or an explicit ask rule there is
// final), then the conversation's grants. grant is the grant that allowed
// the request, or nil when the profile decided or nothing did. A Verdict
// without Action means no rule applies: the request needs a card.
//
// Bash grants mean what the CLI's rule meant: "npm test:*" became the
// command pattern "npm test *" (see docs/rules.md), evaluated after the
// profile's rules by policy.Decide; any other grant allows exactly the
// command line that was allowed, nothing else.
func decidePolicy(profile []policy.Rule, grants []store.Grant, tool, subject string) (v policy.Verdict, grant *store.Grant) {
	pv := policy.Decide(profile, tool, subject)
	if pv.Action == policy.ActionAllow || pv.Action == policy.ActionDeny || pv.Rule.Action == policy.ActionAsk {
		return pv, nil
	}
	for i, g := range grants {
		if g.Tool == "Bash" && tool == "Bash" && strings.TrimSpace(g.Match) == strings.TrimSpace(subject) {
			return policy.Verdict{Action: policy.ActionAllow, Rule: grantRule(g), Why: "the exact command was allowed"}, &grants[i]
		}
	}
	var rules []policy.Rule
	var from []int // grant index of each rule
	for i, g := range grants {
		if patternGrant(g) {
			rules = append(rules, grantRule(g))
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

// grantRules returns grants as allow rules, in order.
func grantRules(grants []store.Grant) []policy.Rule {
	out := make([]policy.Rule, len(grants))
	for i, g := range grants {
		out[i] = grantRule(g)
	}
	return out
}

func grantRule(g store.Grant) policy.Rule {
	return policy.Rule{Tool: g.Tool, Match: g.Match, Action: policy.ActionAllow}
}

// activeGrants reads the conversation's grants. A store error is logged
// and means "no grants": the request then gets a card, never a wrong allow.
func (cv *conversation) activeGrants(ctx context.Context) []store.Grant {
	gs, err := cv.core.st.ActiveGrants(ctx, cv.id)
	if err != nil {
		cv.log.Error("read grants; asking instead", "err", err)
		return nil
	}
	return gs
}

// grantDecision allows a request matching one of the conversation's grants,
// without a card, and audits it.
func (cv *conversation) grantDecision(ctx context.Context, req streamjson.PermissionRequest, v policy.Verdict, g store.Grant) {
	desc := fmt.Sprintf("grant #%d %s (granted by %s)", g.Num, ruleText(grantRule(g)), orDefault(g.GrantedBy, "unknown"))
	cv.autoDecision(ctx, req, streamjson.Decision{Allow: true, UpdatedInput: req.Input}, store.DecisionGrant, desc, "")
}

// ruleText describes a rule for the audit log and chat: Bash "git push *".
func ruleText(r policy.Rule) string {
	if r.Match == "" {
		return r.Tool
	}
	return r.Tool + " " + fmt.Sprintf("%q", r.Match)
}

// storeGrants records the grants of an "Always allow" click on cd by who.
// It returns what to say about them in the audit and on the card; a store
// error is logged and reported there (the CLI still gets the session rule).
func (cv *conversation) storeGrants(ctx context.Context, cd *card, who author) (audit, status string) {
	if len(cd.grants) == 0 {
		return "", ""
	}
	gs := make([]store.Grant, len(cd.grants))
	for i, r := range cd.grants {
		gs[i] = store.Grant{Tool: r.Tool, Match: r.Match, GrantedBy: who.id, ApprovalID: cd.id}
	}
	stored, err := cv.core.st.AddGrants(ctx, cv.id, gs)
	if err != nil {
		cv.log.Error("store grants", "request", cd.id, "err", err)
		return "grant not stored (database error)", " (for this agent process only: the grant could not be stored)"
	}
	var parts, nums []string
	for _, g := range stored {
		parts = append(parts, fmt.Sprintf("#%d %s", g.Num, ruleText(grantRule(g))))
		nums = append(nums, fmt.Sprintf("#%d", g.Num))
		cv.log.Info("grant stored", "grant", g.Num, "tool", g.Tool, "match", g.Match, "by", who.id, "request", cd.id)
	}
	return "granted " + strings.Join(parts, ", "),
		" (conversation rule " + strings.Join(nums, ", ") + "; " + bridges.CommandPrefix + "rules lists it)"
}

// alwaysPermissions turns the CLI's permission suggestions into what
// "Always allow" does: the updatedPermissions sent to the CLI, every entry
// with destination "session", and the grants the bridge stores. When the
// CLI suggests allow rules, only they (and the directories they need) are
// used, so allowing one command does not also switch the session to accept
// every edit; otherwise the suggested mode or directories are applied for
// the session. Entries that cannot be kept safely are dropped: rules that
// are not allow rules or cannot become a grant, removals, unknown types and
// bypassPermissions. perms is nil when nothing is left (no "Always allow"
// button). The label says what the button does.
func alwaysPermissions(sugg []json.RawMessage) (perms []json.RawMessage, grants []policy.Rule, label string) {
	type rule struct {
		ToolName    string `json:"toolName"`
		RuleContent string `json:"ruleContent"`
	}
	type suggestion struct {
		Type     string `json:"type"`
		Behavior string `json:"behavior"`
		Mode     string `json:"mode"`
		Rules    []rule `json:"rules"`
	}
	var rules, dirs, modeSets []json.RawMessage
	var ruleNames, modes []string
	for _, raw := range sugg {
		var s suggestion
		if json.Unmarshal(raw, &s) != nil {
			continue
		}
		switch s.Type {
		case "addRules", "replaceRules":
			if s.Behavior != "" && s.Behavior != "allow" {
				continue
			}
			var kept []rule
			for _, r := range s.Rules {
				g, ok := grantFromCLIRule(r.ToolName, r.RuleContent)
				if !ok {
					continue
				}
				kept = append(kept, r)
				if !slices.Contains(grants, g) {
					grants = append(grants, g)
				}
				name := r.ToolName
				if r.RuleContent != "" {
					name += "(" + r.RuleContent + ")"
				}
				ruleNames = append(ruleNames, name)
			}
			if len(kept) == 0 {
				continue
			}
			// Additive in the CLI as in the bridge: a replace would drop the
			// session's earlier grants from the running CLI.
			if p, ok := sessionOnly(raw, map[string]any{"type": "addRules", "rules": kept}); ok {
				rules = append(rules, p)
			}
		case "addDirectories":
			if p, ok := sessionOnly(raw, nil); ok {
				dirs = append(dirs, p)
			}
		case "setMode":
			switch s.Mode {
			case config.ModeDefault, config.ModeAcceptEdits, config.ModePlan:
				if p, ok := sessionOnly(raw, nil); ok {
					modeSets = append(modeSets, p)
					modes = append(modes, s.Mode)
				}
			}
		}
	}
	if len(rules) > 0 {
		return append(rules, dirs...), grants,
			"Always allow adds the rule " + codeSpan(render.Truncate(strings.Join(ruleNames, ", "), 200)) + " to this conversation"
	}
	others := append(modeSets, dirs...)
	if len(others) == 0 {
		return nil, nil, ""
	}
	label = "Always allow applies the agent's suggestion for this session"
	if len(modes) > 0 {
		label = "Always allow switches this session to " + codeSpan(strings.Join(modes, ", ")) + " mode"
	}
	return others, nil, label
}

// sessionOnly rewrites one permission update with destination "session"
// (and the fields in set), keeping its other fields.
func sessionOnly(raw json.RawMessage, set map[string]any) (json.RawMessage, bool) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, false
	}
	for k, v := range set {
		m[k] = v
	}
	m["destination"] = "session"
	out, err := json.Marshal(m)
	if err != nil {
		return nil, false
	}
	return out, true
}

// grantFromCLIRule converts a CLI permission rule (toolName, ruleContent)
// into the bridge rule a grant stores. For Bash the CLI's prefix form
// "git push:*" becomes the glob "git push *" and any other content is an
// exact command (glob characters escaped); for other tools the content is
// kept as the glob. ok is false for a rule without a tool name.
func grantFromCLIRule(tool, content string) (policy.Rule, bool) {
	tool = strings.TrimSpace(tool)
	if tool == "" {
		return policy.Rule{}, false
	}
	r := policy.Rule{Tool: escapeGlob(tool), Action: policy.ActionAllow}
	switch {
	case tool != "Bash":
		r.Match = content
	case strings.HasSuffix(content, ":*"):
		// "npm test:*": the command and any further arguments.
		r.Match = strings.TrimSpace(strings.TrimSuffix(content, ":*")) + " *"
		if policy.CheckBashPattern(r.Match) != nil {
			return policy.Rule{}, false
		}
	case strings.TrimSpace(content) == "":
		return policy.Rule{}, false
	default:
		// Exactly this command line (see decidePolicy).
		r.Match = strings.TrimSpace(content)
	}
	return r, true
}

// escapeGlob makes s a glob (see policy.Rule.Matches) matching only s.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch c {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
