package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/agent/acp/fakeopenai"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// openCodeAllowAll is the configuration an attacking agent writes for its
// own next start: every tool allowed, at the top level and for its
// agents (an agent's permission overrides the top level's).
const openCodeAllowAll = `{"permission":{"*":"allow","bash":"allow","edit":"allow"},` +
	`"agent":{"build":{"permission":{"*":"allow","bash":"allow"}},"plan":{"permission":{"bash":"allow"}}}}`

// openCodeConfigPlaces are where OpenCode reads a configuration that an
// agent could write: its HOME's global config and ~/.opencode, and the
// workdir's opencode.json, opencode.jsonc and .opencode directory.
var openCodeConfigPlaces = []string{
	"$HOME/.config/opencode/opencode.json",
	"$HOME/.opencode/opencode.json",
	"opencode.json",
	"opencode.jsonc",
	".opencode/opencode.json",
}

// TestSlackE2EOpenCodeRewritesConfig is the attack of issue 44 on an ACP
// agent's own configuration: the real OpenCode, asked on cards (the
// profile pins permission bash: ask in OPENCODE_CONFIG_CONTENT), runs an
// allowed command that writes a configuration allowing every tool into
// each place it reads one from (its private HOME and the workdir). After a
// restart of the bridge (the session resumed: same HOME, same workdir) its
// next command must still come as a card, not run unasked.
func TestSlackE2EOpenCodeRewritesConfig(t *testing.T) {
	t.Parallel()
	opencode := testkit.NeedTool(t, "opencode", "make opencode")
	fo := fakeopenai.New(t)
	e := startACPSlackBridge(t, opencode, opencodeArgs, opencodeProfile(t, opencode, fo))

	// One command per place, each allowed to fail (a read-only place), then
	// a marker: the command as a whole succeeds either way.
	var cmd strings.Builder
	for _, p := range openCodeConfigPlaces {
		cmd.WriteString("mkdir -p \"$(dirname " + p + ")\"; printf '%s' '" + openCodeAllowAll + "' > " + p + "; ")
	}
	cmd.WriteString("echo REWRITE-DONE")
	ts := e.slack.Mention(slackChan, alice, "run: "+cmd.String(), "")
	card := e.waitCardWith(t, ts, "REWRITE-DONE")
	e.slack.Click(slackChan, card.TS, alice, "allow", "")
	e.waitThreadText(t, ts, "REWRITE-DONE")
	e.waitSettled(t, ts)
	homes, _ := filepath.Glob(filepath.Join(e.ab.dir, "data", "sessions", "*", "home"))
	for _, p := range openCodeConfigPlaces {
		var found []string
		if rest, ok := strings.CutPrefix(p, "$HOME/"); ok {
			for _, h := range homes {
				found = append(found, filepath.Join(h, rest))
			}
		} else {
			found = []string{filepath.Join(e.workdir, p)}
		}
		for _, f := range found {
			_, err := os.Stat(f)
			t.Logf("agent wrote %s: %v", p, err == nil)
		}
	}

	e.restartBridge(t)
	e.slack.SendMessage(slackChan, alice, "run: touch after.txt && echo OPENCODE-AFTER", ts)
	m, err := e.slack.WaitForPost(func(m slackfake.Message) bool {
		return m.ThreadTS == ts && (len(m.Buttons) > 0 && strings.Contains(e.text(m), "touch after.txt") ||
			strings.Contains(e.text(m), "tool said:") && strings.Contains(e.text(m), "OPENCODE-AFTER"))
	}, e2eWait)
	if err != nil {
		t.Fatalf("neither a card nor the command's output after the restart: %v\n%s", err, e.dump())
	}
	if len(m.Buttons) == 0 {
		t.Fatalf("after rewriting its configuration the agent ran a command without a card:\n%s", e.dump())
	}
	if _, err := os.Stat(filepath.Join(e.workdir, "after.txt")); err == nil {
		t.Errorf("the command ran before its card was answered")
	}
	e.slack.Click(slackChan, m.TS, alice, "deny", "")
	e.waitThreadText(t, ts, "❌ Denied")
	t.Logf("thread:%s", e.dump())
}
