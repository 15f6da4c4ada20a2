package policy

import (
	"path"
	"testing"
)

func TestRuleMatches(t *testing.T) {
	cases := []struct {
		rule          Rule
		tool, subject string
		want          bool
	}{
		{Rule{Tool: "Read"}, "Read", "/etc/passwd", true},
		{Rule{Tool: "Read"}, "Write", "/etc/passwd", false},
		{Rule{Tool: "Read"}, "read", "x", false},
		{Rule{Tool: "Bash", Match: "rm -rf *"}, "Bash", "rm -rf /", true},
		{Rule{Tool: "Bash", Match: "rm -rf *"}, "Bash", "rm -rf /tmp/a b/c", true},
		{Rule{Tool: "Bash", Match: "rm -rf *"}, "Bash", "rm -rf ", true},
		{Rule{Tool: "Bash", Match: "rm -rf *"}, "Bash", "sudo rm -rf /", false},
		{Rule{Tool: "Bash", Match: "rm -rf *"}, "Bash", "rm -r /", false},
		{Rule{Tool: "Bash", Match: "*rm -rf*"}, "Bash", "cd / && rm -rf x", true},
		{Rule{Tool: "Bash", Match: "git *"}, "Bash", "git", false},
		{Rule{Tool: "Bash", Match: "git*"}, "Bash", "git", true},
		{Rule{Tool: "Edit", Match: "/repo/*.go"}, "Edit", "/repo/a/b/c.go", true},
		{Rule{Tool: "Edit", Match: "/repo/*.go"}, "Edit", "/repo/a/b/c.gox", false},
		{Rule{Tool: "Edit", Match: "*.go"}, "Edit", "main.go.go", true},
		{Rule{Tool: "Edit", Match: "file?.txt"}, "Edit", "file1.txt", true},
		{Rule{Tool: "Edit", Match: "file?.txt"}, "Edit", "file10.txt", false},
		{Rule{Tool: "Edit", Match: "héllo?"}, "Edit", "héllo✓", true},
		{Rule{Tool: "Edit", Match: "v[0-9].txt"}, "Edit", "v7.txt", true},
		{Rule{Tool: "Edit", Match: "v[0-9].txt"}, "Edit", "vx.txt", false},
		{Rule{Tool: "Edit", Match: "v[^0-9].txt"}, "Edit", "vx.txt", true},
		{Rule{Tool: "Edit", Match: "v[!0-9].txt"}, "Edit", "v1.txt", false},
		{Rule{Tool: "Bash", Match: `echo \*`}, "Bash", "echo *", true},
		{Rule{Tool: "Bash", Match: `echo \*`}, "Bash", "echo hi", false},
		{Rule{Tool: "mcp__github__*"}, "mcp__github__create_issue", "", true},
		{Rule{Tool: "mcp__github__*"}, "mcp__slack__post", "", false},
		{Rule{Tool: "*", Match: "https://evil.example/*"}, "WebFetch", "https://evil.example/a?b=c", true},
		{Rule{Tool: "Bash", Match: "a*b*c*d"}, "Bash", "axxbyyczzd", true},
		{Rule{Tool: "Bash", Match: "a*b*c*d"}, "Bash", "axxbyyczz", false},
		{Rule{Tool: "Bash", Match: "rm [a-"}, "Bash", "rm [a-", false}, // malformed: matches nothing
	}
	for _, tc := range cases {
		t.Run(tc.rule.Tool+"|"+tc.rule.Match+"|"+tc.subject, func(t *testing.T) {
			if got := tc.rule.Matches(tc.tool, tc.subject); got != tc.want {
				t.Errorf("%+v.Matches(%q, %q) = %v, want %v", tc.rule, tc.tool, tc.subject, got, tc.want)
			}
		})
	}
}

func TestCheckGlob(t *testing.T) {
	cases := []struct {
		pattern string
		ok      bool
	}{
		{"", true}, {"*", true}, {"a?b", true}, {"[abc]", true}, {"[a-z]*", true}, {`\[`, true}, {"[]]", true}, {"[^]]x", true},
		{"[", false}, {"[a-", false}, {"[z-a]", false}, {`abc\`, false}, {"[abc", false},
	}
	for _, tc := range cases {
		t.Run(tc.pattern, func(t *testing.T) {
			if err := CheckGlob(tc.pattern); (err == nil) != tc.ok {
				t.Errorf("CheckGlob(%q) = %v, want ok=%v", tc.pattern, err, tc.ok)
			}
		})
	}
}

// FuzzGlobMatch: on subjects without '/', globMatch agrees with
// path.Match (whose '*' stops at '/') for patterns both accept.
func FuzzGlobMatch(f *testing.F) {
	f.Add("a*b?c[x-z]", "aqqbwcy")
	f.Add(`\**`, "*star")
	f.Add("[^a]*", "ba")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		got := globMatch(pattern, s)
		if CheckGlob(pattern) != nil {
			return
		}
		for _, c := range pattern + s {
			if c == '/' || c == ']' || c == '!' || c == '-' {
				return // path.Match treats these differently in classes or stops at '/'
			}
		}
		want, err := path.Match(pattern, s)
		if err == nil && got != want {
			t.Errorf("globMatch(%q, %q) = %v, path.Match = %v", pattern, s, got, want)
		}
	})
}
