package discord

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/adapters/markdown/markdowntest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestToDiscordGolden converts testdata/format/*.md and compares with the
// .golden files next to them (go test -run TestToDiscordGolden -update to
// rewrite them after a deliberate change).
func TestToDiscordGolden(t *testing.T) {
	t.Parallel()
	inputs, err := filepath.Glob(filepath.Join("testdata", "format", "*.md"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs: %v", err)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			got := toDiscord(string(src))
			markdowntest.Golden(t, in, got, *update)
		})
	}
}

func TestToDiscordRules(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"empty", "", ""},
		{"h3 kept", "### Tests", "### Tests"},
		{"h4 bold", "#### Tests", "**Tests**"},
		{"h6 closing hashes", "###### Tests ###", "**Tests**"},
		{"not a heading", "####Tests", "####Tests"},
		{"rule", "a\n\n---\n\nb", "a\n\n" + horizontalRule + "\n\nb"},
		{"setext h2", "Title\n---", "## Title"},
		{"list then dashes is a rule", "- item\n---", "- item\n" + horizontalRule},
		{"heading in code untouched", "```\n#### x\n```", "```\n#### x\n```"},
		{"one-column table", "| a |\n|---|\n| b |", "```\na\n-\nb\n```"},
		{"pipe text is no table", "a | b\nc | d", "a | b\nc | d"},
		{"mismatched delimiter", "| a | b |\n|---|\n| c | d |", "| a | b |\n|---|\n| c | d |"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := toDiscord(tc.in); got != tc.want {
				t.Errorf("toDiscord(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
