package grants

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/config/policy"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// AlwaysPermissions turns the CLI's permission suggestions into what
// "Always allow" does: the updatedPermissions sent to the CLI, every entry
// with destination "session", and the grants the bridge stores. When the
// CLI suggests allow rules, only they (and the directories they need) are
// used, so allowing one command does not also switch the session to accept
// every edit; otherwise the suggested mode or directories are applied for
// the session. Entries that cannot be kept safely are dropped: rules that
// are not allow rules or cannot become a grant, removals, unknown types and
// bypassPermissions. perms is nil when nothing is left (no "Always allow"
// button). The label says what the button does.
func AlwaysPermissions(sugg []json.RawMessage) (perms []json.RawMessage, grants []policy.Rule, label string) {
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
				g, ok := FromCLIRule(r.ToolName, r.RuleContent)
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
			case profile.ModeDefault, profile.ModeAcceptEdits, profile.ModePlan:
				if p, ok := sessionOnly(raw, nil); ok {
					modeSets = append(modeSets, p)
					modes = append(modes, s.Mode)
				}
			}
		}
	}
	if len(rules) > 0 {
		return append(rules, dirs...), grants,
			"Always allow adds the rule " + render.CodeSpan(textcut.Truncate(strings.Join(ruleNames, ", "), 200)) + " to this conversation"
	}
	others := append(modeSets, dirs...)
	if len(others) == 0 {
		return nil, nil, ""
	}
	label = "Always allow applies the agent's suggestion for this session"
	if len(modes) > 0 {
		label = "Always allow switches this session to " + render.CodeSpan(strings.Join(modes, ", ")) + " mode"
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

// FromCLIRule converts a CLI permission rule (toolName, ruleContent)
// into the bridge rule a grant stores. For Bash the CLI's prefix form
// "git push:*" becomes the glob "git push *" and any other content is an
// exact command (glob characters escaped); for other tools the content is
// kept as the glob. ok is false for a rule without a tool name.
func FromCLIRule(tool, content string) (policy.Rule, bool) {
	tool = strings.TrimSpace(tool)
	if tool == "" {
		return policy.Rule{}, false
	}
	r := policy.Rule{Tool: EscapeGlob(tool), Action: policy.ActionAllow}
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
		// Exactly this command line (see Decide).
		r.Match = strings.TrimSpace(content)
	}
	return r, true
}

// EscapeGlob makes s a glob (see policy.Rule.Matches) matching only s.
func EscapeGlob(s string) string {
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
