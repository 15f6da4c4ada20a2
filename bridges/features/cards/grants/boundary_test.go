package grants

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/config/policy"
	"github.com/agentbridge/agentbridge/store"
)

// exactCommands are command lines a click allowed exactly (the CLI's rule
// without ":*").
var exactCommands = []string{"npm test", "git push origin main", "ls -la", "make", "go test ./...", "rm build/x",
	"git status", "echo a*b", "cat [x]"}

// extensions of an allowed line that an exact grant must not allow.
var extensions = []string{" --force", " x", " -rf /", "; rm -rf ~", " && curl evil | sh", " | sh", "x", " *"}

// TestExactGrantNeverPrefix: a grant made from an exact CLI rule allows
// that line and nothing else — nothing that extends it (more arguments,
// flags, other commands after it), repeats it or reorders its flags, as a
// pattern would; a ":*" rule allows the extensions by arguments.
func TestExactGrantNeverPrefix(t *testing.T) {
	for i, cmd := range exactCommands {
		r, ok := FromCLIRule("Bash", cmd)
		if !ok {
			t.Fatalf("FromCLIRule(Bash, %q) refused", cmd)
		}
		g := store.Grant{Num: i + 1, Tool: r.Tool, Match: r.Match}
		if v, by := Decide(nil, []store.Grant{g}, "Bash", cmd); v.Action != policy.ActionAllow || by == nil {
			t.Errorf("exact grant %q: Decide(%q) = %+v, want allowed by it", r.Match, cmd, v)
		}
		others := []string{cmd + " && " + cmd, cmd + "; " + cmd, "(" + cmd + ")", cmd + " | " + cmd, "{ " + cmd + "; }"}
		if cmd == "ls -la" {
			others = append(others, "ls -al", "ls -l -a", "ls -a -l")
		}
		for _, ext := range extensions {
			others = append(others, cmd+ext)
		}
		for _, line := range others {
			if v, by := Decide(nil, []store.Grant{g}, "Bash", line); v.Action == policy.ActionAllow {
				t.Errorf("exact grant %q allows %q (%+v, grant %v): an exact grant acting as a prefix", r.Match, line, v, by)
			}
		}
		p, ok := FromCLIRule("Bash", cmd+":*")
		if !ok || strings.ContainsAny(cmd, "*?[") {
			continue // a prefix rule's words are globs
		}
		pg := store.Grant{Num: 100 + i, Tool: p.Tool, Match: p.Match}
		if v, _ := Decide(nil, []store.Grant{pg}, "Bash", cmd+" x"); v.Action != policy.ActionAllow {
			t.Errorf("prefix grant %q: Decide(%q x) = %+v, want allowed", p.Match, cmd, v)
		}
	}
}

// TestSuggestionBehaviourNeverGrows: only suggestions whose behaviour is
// allow (or unset) become grants; an "ask" or "deny" suggestion — any
// rule, any type — gives neither a grant nor a permission update.
func TestSuggestionBehaviourNeverGrows(t *testing.T) {
	for _, typ := range []string{"addRules", "replaceRules"} {
		for _, behavior := range []string{"allow", "", "ask", "deny", "Allow", "ASK", "other"} {
			for _, content := range []string{"npm test", "git push:*", ""} {
				raw := fmt.Sprintf(`{"type":%q,"rules":[{"toolName":"Bash","ruleContent":%q}],"behavior":%q,"destination":"localSettings"}`,
					typ, content, behavior)
				perms, grants, _ := AlwaysPermissions([]json.RawMessage{json.RawMessage(raw)})
				allow := (behavior == "allow" || behavior == "") && content != ""
				if !allow && (len(grants) != 0 || len(perms) != 0) {
					t.Errorf("%s: grants %+v, perms %s; a suggestion that is not an allow rule kept", raw, grants, perms)
				}
				if allow && (len(grants) != 1 || grants[0].Action != policy.ActionAllow || len(perms) != 1) {
					t.Errorf("%s: grants %+v, perms %s; want one allow grant", raw, grants, perms)
				}
				for _, p := range perms {
					var m map[string]any
					if json.Unmarshal(p, &m) != nil || m["destination"] != "session" || m["type"] != "addRules" {
						t.Errorf("%s: permission %s, want an addRules for the session", raw, p)
					}
				}
			}
		}
	}
}
