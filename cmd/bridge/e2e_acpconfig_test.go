package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// openCodePinned is what the admin pins in OPENCODE_CONFIG_CONTENT so that
// an agent's rewrite of its own files does not win: every tool asked, at
// the top level and for OpenCode's own agents (build, plan, general), and
// OPENCODE_DISABLE_PROJECT_CONFIG (the workdir's opencode.json and
// .opencode are not read at all).
const (
	openCodePinned = `"permission":{"*":"ask","bash":"ask","edit":"ask"},` +
		`"agent":{"build":{"permission":{"*":"ask","bash":"ask","edit":"ask"}},` +
		`"plan":{"permission":{"*":"ask","bash":"ask","edit":"ask"}},` +
		`"general":{"permission":{"*":"ask","bash":"ask","edit":"ask"}}}`
	openCodePinnedEnv = "      OPENCODE_DISABLE_PROJECT_CONFIG: \"1\"\n"
)

// TestSlackE2EOpenCodeRewritesConfig is the attack of issue 44 on an ACP
// agent's own configuration: the real OpenCode, asked on cards (the
// profile pins its approval settings, openCodePinned), runs an allowed
// command that writes a configuration allowing every tool into each place
// it reads one from (its private HOME and the workdir). After a restart of
// the bridge (the session resumed: same HOME, same workdir) its next
// command must still come as a card, not run unasked. With only
// permission bash: ask pinned (as TestSlackE2EOpenCodeACP's profile; run
// with ACPCONFIG_WEAK_PIN=1 to see it), or the top level pinned without
// OpenCode's agents, the rewrite wins and this test fails: the command
// runs without a card.
func TestSlackE2EOpenCodeRewritesConfig(t *testing.T) {
	t.Parallel()
	opencode := testkit.NeedTool(t, "opencode", "make opencode")
	fo := fakeopenai.New(t)
	pinned, env := openCodePinned, openCodePinnedEnv
	if os.Getenv("ACPCONFIG_WEAK_PIN") != "" { // to see the attack win
		pinned, env = `"permission":{"bash":"ask"}`, ""
	}
	e := startACPSlackBridge(t, opencode, opencodeArgs, opencodePinnedProfile(t, opencode, fo, pinned, env))

	// One command per place, each allowed to fail (a read-only place), then
	// a marker: the command as a whole succeeds either way.
	var cmd strings.Builder
	for _, p := range openCodeConfigPlaces {
		cmd.WriteString("mkdir -p \"$(dirname " + p + ")\"; printf '%s' '" + openCodeAllowAll + "' > " + p + "; ")
	}
	cmd.WriteString("echo REWRITE-DONE")
	ts := e.slack.Mention(slackChan, alice, "run: "+cmd.String(), "")
	card := e.waitCardWith(t, ts, "dirname $HOME/.config/opencode/opencode.json")
	e.slack.Click(slackChan, card.TS, alice, "allow", "")
	e.waitToolOutput(t, ts, "REWRITE-DONE")
	e.waitSettled(t, ts)
	homes, _ := filepath.Glob(filepath.Join(e.ab.dir, "data", "sessions", "*", "home"))
	for _, p := range openCodeConfigPlaces {
		found := []string{filepath.Join(e.workdir, p)}
		if rest, ok := strings.CutPrefix(p, "$HOME/"); ok {
			found = nil
			for _, h := range homes {
				found = append(found, filepath.Join(h, rest))
			}
		}
		wrote := false
		for _, f := range found {
			if _, err := os.Stat(f); err == nil {
				wrote = true
			}
		}
		t.Logf("the agent wrote %s: %v", p, wrote)
	}

	e.stillAsksAfterRestart(t, ts, e.workdir, "OPENCODE-AFTER", "❌ Denied", func() string { return fmt.Sprintf("model requests: %+v", fo.Requests()) })
	t.Logf("thread:%s", e.dump())
}

// stillAsksAfterRestart is what the configuration attacks share once the
// agent rewrote its settings: the bridge restarts (same session, same
// HOME), the agent is asked in thread ts to run "touch after.txt" in
// workdir, and that must be a card, never the file made without one. The
// card is denied; the thread must show denied (the agent's words for it)
// and the file must not exist. more, when set, adds to failure messages.
func (e *slackEnv) stillAsksAfterRestart(t *testing.T, ts, workdir, marker, denied string, more func() string) {
	t.Helper()
	e.restartBridge(t)
	e.slack.SendMessage(slackChan, alice, "run: touch after.txt && echo "+marker, ts)
	after := filepath.Join(workdir, "after.txt")
	details := e.dump
	if more != nil {
		details = func() string { return e.dump() + "\n" + more() }
	}
	deadline := time.Now().Add(e2eWait)
	for {
		m, err := e.slack.WaitForPost(func(m slackfake.Message) bool {
			return m.ThreadTS == ts && len(m.Buttons) > 0 && strings.Contains(e.text(m), "touch after.txt")
		}, time.Second)
		if fileExists(after) {
			t.Fatalf("after rewriting its configuration the agent ran a command without a card:\n%s", details())
		}
		if err == nil {
			e.slack.Click(slackChan, m.TS, alice, "deny", "")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("neither a card nor the command run after the restart:\n%s", details())
		}
	}
	e.waitThreadText(t, ts, denied)
	if fileExists(after) {
		t.Errorf("the denied command ran")
	}
}

// waitToolOutput waits for the post in the thread that shows a command's
// output ("tool said: …", the fake model's answer to it) with want in it:
// the command ran to its end (a card's own text may show the command).
func (e *slackEnv) waitToolOutput(t *testing.T, thread, want string) {
	t.Helper()
	// A message as it reads now: the output may come in an edit of a
	// live message posted before it (a busy machine posts one early).
	if err := e.slack.WaitFor(func() bool {
		for _, p := range e.slack.Posts() {
			if cur, ok := e.slack.Current(p.Channel, p.TS); ok && p.ThreadTS == thread &&
				strings.Contains(e.text(cur), "tool said:") && strings.Contains(e.text(cur), want) {
				return true
			}
		}
		return false
	}, e2eWait); err != nil {
		t.Fatalf("no output with %q in thread %s: %v\n%s", want, thread, err, e.dump())
	}
}
