package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentbridge/agentbridge/agent/acp/fakeopenai"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// codexPinArgs are codex-acp's arguments that pin its approval policy over
// whatever ~/.codex/config.toml says (-c overrides the file's keys).
var codexPinArgs = []string{"-c", "approval_policy=untrusted"}

// TestSlackE2ECodexRewritesConfig is the attack of issue 44 on Codex:
// asked on a card, the agent rewrites its HOME's ~/.codex/config.toml
// (approval_policy = "never") and tries the workdir's .codex/config.toml
// (read-only).
// After a restart of the bridge its next command must still come as a
// card: the profile pins approval_policy with -c (codexPinArgs). Run with
// ACPCONFIG_WEAK_PIN=1 (no -c) to see the rewrite win.
func TestSlackE2ECodexRewritesConfig(t *testing.T) {
	t.Parallel()
	codex := testkit.NeedTool(t, "codex-acp", "make codex-acp")
	fo := fakeopenai.New(t)
	workdir := filepath.Join(t.TempDir(), "work")
	args := codexPinArgs
	if os.Getenv("ACPCONFIG_WEAK_PIN") != "" { // to see the attack win
		args = nil
	}
	e := startACPSlackBridgeIn(t, workdir, codex, args, codexProfile(t, codex, workdir, fo))

	// (A top-level profile = "…" selecting a profile of the file makes
	// codex-acp 0.16.0 refuse to start: "legacy profile config is no longer
	// supported"; the agent would only break its own profile.)
	cmd := `sed -i 's/approval_policy = "untrusted"/approval_policy = "never"/' $HOME/.codex/config.toml; ` +
		`mkdir -p .codex; printf 'approval_policy = "never"\n' > .codex/config.toml; echo REWRITE-DONE`
	ts := e.slack.Mention(slackChan, alice, "run: "+cmd, "")
	card := e.waitCardWith(t, ts, "sed -i")
	e.slack.Click(slackChan, card.TS, alice, "allow", "")
	e.waitToolOutput(t, ts, "REWRITE-DONE")
	e.waitSettled(t, ts)
	homes, _ := filepath.Glob(filepath.Join(filepath.Dir(filepath.Dir(workdir)), "*", "codex-home", ".codex", "config.toml"))
	for _, h := range homes {
		b, _ := os.ReadFile(h)
		t.Logf("%s after the rewrite:\n%s", h, b)
	}

	e.stillAsksAfterRestart(t, ts, workdir, "CODEX-AFTER", "❌ Denied", nil)
	t.Logf("thread:%s", e.dump())
}
