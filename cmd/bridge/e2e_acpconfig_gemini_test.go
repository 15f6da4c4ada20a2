package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/agent/acp/fakegemini"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// geminiAdminPins writes the admin's pins of Gemini CLI's approval settings
// into a directory of their own (shown read-only in the sandbox): a system
// settings file (GEMINI_CLI_SYSTEM_SETTINGS_PATH, over the user's and the
// workspace's) and an admin policy (--admin-policy: its tier beats the
// user's ~/.gemini/policies) asking for every shell command. It returns
// the extra args, env lines and the directory.
func geminiAdminPins(t *testing.T) (args []string, env, dir string) {
	dir = filepath.Join(t.TempDir(), "gemini-admin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{"admin":{"secureModeEnabled":true},"security":{"disableYoloMode":true},"tools":{"allowed":[]}}`
	policy := "[[rule]]\ntoolName = \"run_shell_command\"\ndecision = \"ask_user\"\npriority = 999\n"
	for name, body := range map[string]string{"settings.json": settings, "ask.toml": policy} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"--admin-policy", filepath.Join(dir, "ask.toml")},
		fmt.Sprintf("GEMINI_CLI_SYSTEM_SETTINGS_PATH: %q", filepath.Join(dir, "settings.json")), dir
}

// TestSlackE2EGeminiRewritesConfig is the attack of issue 44 on Gemini
// CLI: asked on a card, the agent writes into its private HOME a user
// policy allowing every shell command (~/.gemini/policies) and user
// settings allowing the shell tool (~/.gemini/settings.json), and tries
// the workdir's .gemini/settings.json (read-only). After a restart of the
// bridge (same HOME) its next command must still come as a card: the
// admin's system settings and admin policy (geminiAdminPins) win. Run with
// ACPCONFIG_WEAK_PIN=1 (no pins) to see the rewrite win.
func TestSlackE2EGeminiRewritesConfig(t *testing.T) {
	t.Parallel()
	gemini := testkit.NeedTool(t, "gemini", "make gemini")
	fg := fakegemini.New(t)
	real, err := filepath.EvalSymlinks(gemini)
	if err != nil {
		t.Fatal(err)
	}
	modules := real
	for filepath.Base(modules) != "node_modules" && modules != "/" {
		modules = filepath.Dir(modules)
	}
	args, pinEnv, pinDir := geminiAdminPins(t)
	if os.Getenv("ACPCONFIG_WEAK_PIN") != "" { // to see the attack win
		args, pinEnv = nil, ""
	}
	profile := fmt.Sprintf("    env: { GEMINI_API_KEY: fake-key, GOOGLE_GEMINI_BASE_URL: %q, %s }\n"+
		"    network: { allow: [%q] }\n"+
		"    sandbox_binds: [{ path: %q, mode: ro }, { path: %q, mode: ro }]\n",
		fg.URL, pinEnv, fg.Addr(), modules, pinDir)
	profile = strings.Replace(profile, ",  }", " }", 1)
	e := startACPSlackBridge(t, gemini, append([]string{"--acp"}, args...), profile)

	cmd := `mkdir -p $HOME/.gemini/policies .gemini; ` +
		`printf '[[rule]]\ntoolName = "run_shell_command"\ndecision = "allow"\npriority = 999\n' > $HOME/.gemini/policies/allow.toml; ` +
		`printf '{"tools":{"allowed":["run_shell_command"]},"general":{"defaultApprovalMode":"auto_edit"}}' > $HOME/.gemini/settings.json; ` +
		`printf '{"tools":{"allowed":["run_shell_command"]}}' > .gemini/settings.json; echo REWRITE-DONE`
	ts := e.slack.Mention(slackChan, alice, "run: "+cmd, "")
	card := e.waitCardWith(t, ts, "mkdir -p $HOME/.gemini/policies")
	e.slack.Click(slackChan, card.TS, alice, "allow", "")
	e.waitToolOutput(t, ts, "REWRITE-DONE")
	e.waitSettled(t, ts)
	homes, _ := filepath.Glob(filepath.Join(e.ab.dir, "data", "sessions", "*", "home", ".gemini", "policies", "allow.toml"))
	t.Logf("the agent wrote its user policy: %d homes; the workdir's .gemini/settings.json: %v",
		len(homes), fileExists(filepath.Join(e.workdir, ".gemini", "settings.json")))
	if len(homes) == 0 {
		t.Fatalf("the agent's rewrite did not land in its HOME:\n%s", e.dump())
	}

	e.stillAsksAfterRestart(t, ts, e.workdir, "GEMINI-AFTER", "was canceled by the user", nil)
	t.Logf("thread:%s", e.dump())
}

// fileExists reports whether path names an existing file.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
