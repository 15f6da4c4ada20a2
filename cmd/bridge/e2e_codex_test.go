package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/agent/acp/fakeopenai"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// codexProfile is the profile keys of a codex-acp agent pointed at the
// fake Responses API fo: a shared HOME whose Codex config names fo as the
// model provider (every command asked; Codex's own sandbox off, the
// bridge's bubblewrap confines it), the key in env, the endpoint listed
// in its egress, and the package's node_modules shown read-only (its
// launcher runs the platform binary from there).
func codexProfile(t *testing.T, codex, workdir string, fo *fakeopenai.Server) string {
	home := filepath.Join(t.TempDir(), "codex-home")
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`model_provider = "fake"
model = "gpt-5.5"
approval_policy = "untrusted"
sandbox_mode = "danger-full-access"

[model_providers.fake]
name = "fake"
base_url = %q
env_key = "OPENAI_API_KEY"
wire_api = "responses"

[projects.%q]
trust_level = "trusted"
`, fo.URL, workdir)
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(codex)
	if err != nil {
		t.Fatal(err)
	}
	modules := real
	for filepath.Base(modules) != "node_modules" && modules != "/" {
		modules = filepath.Dir(modules)
	}
	return fmt.Sprintf("    home: %q\n    env: { OPENAI_API_KEY: sk-fake }\n    network: { allow: [%q] }\n"+
		"    sandbox_binds: [{ path: %q, mode: ro }]\n", home, fo.Addr(), modules)
}

// TestSlackE2ECodexACP drives the real codex-acp (npm
// @zed-industries/codex-acp, pinned in the Makefile) as an agent of kind
// acp, sandboxed and behind the egress gate, against a fake Responses API
// on loopback: authenticated with its OPENAI_API_KEY method, a hello
// turn, a follow-up with its history, a command asked on a card and
// allowed, one denied, !stop of a streaming turn, and after a restart of
// the bridge the conversation resumed with its history (session/load);
// !model switches its model (a session config option), also after the
// restart, and !cost says it reports no cost.
func TestSlackE2ECodexACP(t *testing.T) {
	t.Parallel()
	codex := testkit.NeedTool(t, "codex-acp", "make codex-acp")
	fo := fakeopenai.New(t)
	workdir := filepath.Join(t.TempDir(), "work")
	e := startACPSlackBridgeIn(t, workdir, codex, nil, codexProfile(t, codex, workdir, fo))

	// codex-acp ends a turn whose command was denied.
	ts := e.realACPTurns(t, workdir, "codex heard: ", "CODEX", []string{"tool said:", "CODEX-ALLOWED"}, []string{"❌ Denied", "(The agent ended the turn.)"})

	// codex-acp offers its models as a session config option: !model
	// switches it (session/set_config_option), and the next turn asks the
	// API for that model. It reports the context's size, but no cost.
	e.slack.SendMessage(slackChan, alice, "!model", ts)
	e.waitThreadText(t, ts, "▶ `gpt-5.5` GPT-5.5")
	e.slack.SendMessage(slackChan, alice, "!model gpt-5.4-mini", ts)
	e.waitThreadText(t, ts, "Model set to `gpt-5.4-mini`.")
	e.slack.SendMessage(slackChan, alice, "which model", ts)
	e.waitThreadText(t, ts, "codex heard: which model (6 user messages)")
	e.waitSettled(t, ts)
	if reqs := fo.Requests(); len(reqs) == 0 || reqs[len(reqs)-1].Model != "gpt-5.4-mini" {
		t.Errorf("after !model gpt-5.4-mini the API was asked: %+v", reqs)
	}
	e.slack.SendMessage(slackChan, alice, "!cost", ts)
	e.waitThreadText(t, ts, "This conversation: no cost reported by this agent (kind acp); over ")

	e.restartBridge(t)
	e.slack.SendMessage(slackChan, alice, "after the restart", ts)
	// Seven messages so far: the agent loaded its session with all of them.
	e.waitThreadText(t, ts, "codex heard: after the restart (7 user messages)")
	if reqs := fo.Requests(); reqs[len(reqs)-1].Model != "gpt-5.4-mini" {
		t.Errorf("after the restart the API was asked for %q, not the conversation's model", reqs[len(reqs)-1].Model)
	}
	if strings.Contains(e.threadText(ts), "fresh session") || strings.Contains(e.threadText(ts), "The turn failed") {
		t.Errorf("thread:%s", e.dump())
	}
}
