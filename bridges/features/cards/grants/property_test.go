package grants

import (
	"fmt"
	"testing"

	"github.com/agentbridge/agentbridge/config/policy"
	"github.com/agentbridge/agentbridge/store"
)

// TestGrantNeverBeatsProfileRule is a property over every profile rule
// action (allow, deny, ask) and no rule, for Bash and other tools, against
// every kind of grant (exact command, prefix pattern, glob, catch-all,
// alone and together):
// when a profile rule matches the request, its verdict stands and no grant
// is named; a grant decides only where the profile has no rule.
func TestGrantNeverBeatsProfileRule(t *testing.T) {
	type req struct{ tool, subject string }
	reqs := []req{
		{"Bash", "git push origin main"},
		{"Bash", "make test"},
		{"Bash", "npm test -- --watch"},
		{"Read", "/srv/secret/key.pem"},
		{"WebFetch", "domain:example.com"},
	}
	// ruleForms returns the profile rules matching r with action a.
	ruleForms := func(r req, a string) []policy.Rule {
		forms := []policy.Rule{{Tool: r.tool, Match: "", Action: a}, {Tool: r.tool, Match: "*", Action: a}}
		if r.tool == "Bash" {
			forms = append(forms, policy.Rule{Tool: "Bash", Match: EscapeGlob(r.subject), Action: a},
				policy.Rule{Tool: "Bash", Match: firstWord(r.subject) + " *", Action: a})
		} else {
			forms = append(forms, policy.Rule{Tool: r.tool, Match: EscapeGlob(r.subject), Action: a})
		}
		return forms
	}
	// grantForms returns grants matching r, one kind at a time and all together.
	grantForms := func(r req) [][]store.Grant {
		one := []store.Grant{{Num: 1, Tool: r.tool, Match: r.subject}}
		if r.tool == "Bash" {
			one = append(one, store.Grant{Num: 2, Tool: "Bash", Match: firstWord(r.subject) + " *"},
				store.Grant{Num: 3, Tool: "Bash", Match: "  " + r.subject + " "})
		} else {
			one = append(one, store.Grant{Num: 2, Tool: r.tool, Match: "*"}, store.Grant{Num: 3, Tool: r.tool})
		}
		out := [][]store.Grant{one}
		for _, g := range one {
			out = append(out, []store.Grant{g})
		}
		return out
	}
	unrelated := policy.Rule{Tool: "Bash", Match: "curl *", Action: policy.ActionDeny}
	checked := 0
	for _, r := range reqs {
		for _, grants := range grantForms(r) {
			// No matching rule: a matching grant allows (the property's
			// other half, so the grants above really match).
			if v, g := Decide([]policy.Rule{unrelated}, grants, r.tool, r.subject); v.Action != policy.ActionAllow || g == nil {
				t.Errorf("no rule, grants %v: Decide(%s %q) = %+v grant=%v; want allowed by a grant", grants, r.tool, r.subject, v, g)
			}
			for _, a := range []string{policy.ActionAllow, policy.ActionDeny, policy.ActionAsk} {
				for _, rule := range ruleForms(r, a) {
					for _, profile := range [][]policy.Rule{{rule}, {unrelated, rule}} {
						name := fmt.Sprintf("profile %v, grants %v: %s %q", profile, grants, r.tool, r.subject)
						want := policy.Decide(profile, r.tool, r.subject)
						if want.Action != a {
							t.Fatalf("%s: the profile alone decides %q, want %q (bad test input)", name, want.Action, a)
						}
						v, g := Decide(profile, grants, r.tool, r.subject)
						if v.Action != a || g != nil {
							t.Errorf("%s: Decide = %q grant=%v; want the profile's %q, no grant", name, v.Action, g, a)
						}
						checked++
					}
				}
			}
		}
	}
	t.Logf("%d combinations checked", checked)
}

func firstWord(s string) string {
	for i, c := range s {
		if c == ' ' {
			return s[:i]
		}
	}
	return s
}
