package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
)

// TestSlackE2EArithmeticIsAsked: with the rules of issue 20's attack
// (rm denied, ls allowed), a command line that hides a command in an
// array subscript Bash evaluates as arithmetic gets an approval card
// through the real binary and the real CLI, and the hidden command has
// not run while the card waits.
func TestSlackE2EArithmeticIsAsked(t *testing.T) {
	t.Parallel()
	e := startSlackBridgeWith(t, profileOptions{extra: "    rules:\n" +
		"      - { tool: Bash, match: \"rm *\", action: deny }\n" +
		"      - { tool: Bash, match: \"ls *\", action: allow }\n"})
	victim := filepath.Join(e.workdir, "f")
	cases := []struct {
		command string
		exists  bool // f exists before, and must still exist (rm); else it must not appear (touch)
	}{
		{`x='a[$(touch f)]'; ((x)); ls`, false},
		{`[[ 'a[$(rm -f f)]' -eq 0 ]]; ls`, true},
	}
	for _, tc := range cases {
		_ = os.Remove(victim)
		if tc.exists {
			if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ts := e.slack.Mention(slackChan, alice, "[bash "+tc.command+"]", "")
		// A card, or the tool's result when the rules let it run unasked.
		m, err := e.slack.WaitForPost(func(m slackfake.Message) bool {
			return m.ThreadTS == ts && (len(m.Buttons) > 0 || strings.Contains(e.text(m), "tool said"))
		}, e2eWait)
		if err != nil {
			t.Fatalf("%s: neither a card nor a result: %v\nposts: %s", tc.command, err, e.dump())
		}
		_, statErr := os.Stat(victim)
		if len(m.Buttons) == 0 {
			t.Errorf("%s ran without a card: %q (f exists: %v)", tc.command, e.text(m), statErr == nil)
			continue
		}
		if !strings.Contains(e.text(m), "not understood") {
			t.Errorf("%s: the card does not say why it is asked: %q", tc.command, e.text(m))
		}
		if exists := statErr == nil; exists != tc.exists {
			t.Errorf("%s: f exists = %v before anyone decided", tc.command, exists)
		}
		e.slack.Click(slackChan, m.TS, alice, "deny", "")
		e.waitThreadText(t, ts, "tool said")
		if _, err := os.Stat(victim); (err == nil) != tc.exists {
			t.Errorf("%s: f changed after the card was denied", tc.command)
		}
	}
}
