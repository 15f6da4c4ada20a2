package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/agent/acp/fakeopenai"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// opencodeProfile is the profile keys of an OpenCode ACP agent pointed at
// the fake Responses API fo: its config (in OPENCODE_CONFIG_CONTENT) names
// fo as a provider of one model, and what it would fetch at start (the
// models catalogue, updates, default plugins, language servers) is turned
// off; the endpoint is listed in its egress, and the package's
// node_modules shown read-only (the binary is there). OpenCode talks to a
// server of its own on loopback, through a fetch that follows HTTP_PROXY:
// it listens on localhost (opencodeArgs) and NO_PROXY names localhost,
// which the bridge keeps for an ACP agent (the sandbox's own loopback).
// opencodeArgs is the arguments of OpenCode as an ACP agent: its own
// server on localhost (see opencodeProfile).
var opencodeArgs = []string{"acp", "--hostname", "localhost"}

func opencodeProfile(t *testing.T, opencode string, fo *fakeopenai.Server) string {
	return opencodePinnedProfile(t, opencode, fo, `"permission":{"bash":"ask"}`, "")
}

// opencodePinnedProfile is opencodeProfile with the approval settings
// pinned (JSON members of OPENCODE_CONFIG_CONTENT) and more env lines.
func opencodePinnedProfile(t *testing.T, opencode string, fo *fakeopenai.Server, pinned, env string) string {
	real, err := filepath.EvalSymlinks(opencode)
	if err != nil {
		t.Fatal(err)
	}
	modules := real
	for filepath.Base(modules) != "node_modules" && modules != "/" {
		modules = filepath.Dir(modules)
	}
	config := fmt.Sprintf(`{"autoupdate":false,"share":"disabled","model":"fake/fake-model",%s,`+
		`"provider":{"fake":{"npm":"@ai-sdk/openai","name":"Fake","options":{"baseURL":%q,"apiKey":"sk-fake"},`+
		`"models":{"fake-model":{"name":"Fake model"}}}}}`, pinned, fo.URL)
	return fmt.Sprintf("    env:\n      OPENCODE_CONFIG_CONTENT: %q\n"+
		"      NO_PROXY: localhost\n      OPENCODE_DISABLE_MODELS_FETCH: \"1\"\n      OPENCODE_DISABLE_AUTOUPDATE: \"1\"\n"+
		"      OPENCODE_DISABLE_DEFAULT_PLUGINS: \"1\"\n      OPENCODE_DISABLE_LSP_DOWNLOAD: \"1\"\n%s"+
		"    network: { allow: [%q] }\n"+
		"    sandbox_binds: [{ path: %q, mode: ro }]\n", config, env, fo.Addr(), modules)
}

// TestSlackE2EOpenCodeACP drives the real OpenCode (npm opencode-ai, pinned
// in the Makefile) as an agent of kind acp (opencode acp), sandboxed and
// behind the egress gate, against a fake Responses API on loopback: a
// hello turn, a follow-up with its history, a shell command asked on a
// card and allowed, one denied, !stop of a streaming turn, its
// models listed by !model
// (a session config option), its tokens in !cost with no cost, and after a
// restart of the bridge the conversation resumed (session/load).
func TestSlackE2EOpenCodeACP(t *testing.T) {
	t.Parallel()
	opencode := testkit.NeedTool(t, "opencode", "make opencode")
	fo := fakeopenai.New(t)
	e := startACPSlackBridge(t, opencode, opencodeArgs, opencodeProfile(t, opencode, fo))

	// Its shell commands asked (permission bash: ask): a card allowed (the
	// command runs in the sandbox) and one denied.
	ts := e.realACPTurns(t, e.workdir, "heard: ", "OPENCODE", []string{"tool said:", "OPENCODE-ALLOWED"}, []string{"❌ Denied"})

	e.slack.SendMessage(slackChan, alice, "!model", ts)
	e.waitThreadText(t, ts, "▶ `fake/fake-model`")
	// OpenCode reports each turn's tokens (the prompt's usage), no cost.
	e.slack.SendMessage(slackChan, alice, "!cost", ts)
	e.waitThreadText(t, ts, "This conversation: no cost reported by this agent (kind acp); over 5 turns (")
	if th := e.threadText(ts); strings.Contains(th, "over 5 turns (0 in") {
		t.Errorf("OpenCode's tokens were not recorded:\n%s", e.dump())
	}

	e.restartBridge(t)
	e.slack.SendMessage(slackChan, alice, "after the restart", ts)
	e.waitThreadText(t, ts, "heard: after the restart (")
	thread := e.threadText(ts)
	// Resumed, the model sees the four turns that ended and this message;
	// the stopped one's prompt is in the history or not, as OpenCode kept it.
	resumed := strings.Contains(thread, "heard: after the restart (5 user messages)") ||
		strings.Contains(thread, "heard: after the restart (6 user messages)")
	fresh := strings.Contains(thread, "fresh session") && strings.Contains(thread, "heard: after the restart (1 user messages)")
	if !resumed {
		t.Errorf("after the restart the session was not resumed (fresh: %v):\n%s", fresh, e.dump())
	}
	t.Logf("thread:%s\nmodel requests: %+v", e.dump(), fo.Requests())
}
