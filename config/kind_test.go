package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/config/profile"
)

// TestAgentKind: kind defaults to claude (with its default command); kind
// acp takes command and args verbatim, even flags the Claude Code CLI
// refuses (they are another agent's).
func TestAgentKind(t *testing.T) {
	bot := []string{"bots:", "  - {name: b, platform: discord, agent: coder, discord: {token: t}}"}
	cfg := mustParse(t, src(append([]string{"agents:", "  coder: {}"}, bot...)...), nil)
	if a := cfg.Agents["coder"]; a.Kind != profile.KindClaude || a.Command != "claude" {
		t.Errorf("default profile: kind %q command %q, want claude claude", a.Kind, a.Command)
	}
	cfg = mustParse(t, src(append([]string{"agents:", "  coder:", "    kind: acp", "    command: gemini",
		"    args: [--experimental-acp, --model=x]", "    rules: [{tool: Bash, match: 'git status', action: allow}]"}, bot...)...), nil)
	a := cfg.Agents["coder"]
	if a.Kind != profile.KindACP || a.Command != "gemini" || strings.Join(a.Args, " ") != "--experimental-acp --model=x" || len(a.Rules) != 1 {
		t.Errorf("acp profile: kind %q command %q args %q rules %d", a.Kind, a.Command, a.Args, len(a.Rules))
	}
	if sum := cfg.Summary(); !strings.Contains(sum, "coder: kind=acp command=gemini args=2") || strings.Contains(sum, "permission_mode") {
		t.Errorf("check-config summary of an acp profile:\n%s", sum)
	}
}

// TestAgentKindProblems: an unknown kind, kind acp without command and
// Claude-only keys on kind acp are each refused at their line, saying why.
func TestAgentKindProblems(t *testing.T) {
	bot := []string{"bots:", "  - {name: b, platform: discord, agent: coder, discord: {token: t}}"}
	cases := []struct {
		name  string
		lines []string
		path  string
		line  int
		msg   string
	}{
		{"unknown kind", []string{"    kind: codex", "    command: x"}, "agents.coder.kind", 3, `unknown kind "codex"`},
		{"acp without command", []string{"    kind: acp"}, "agents.coder.command", 2, "kind acp needs command"},
		{"model on acp", []string{"    kind: acp", "    command: x", "    model: opus"}, "agents.coder.model", 5, "model is a Claude Code setting"},
		{"permission_mode on acp", []string{"    kind: acp", "    command: x", "    permission_mode: plan"}, "agents.coder.permission_mode", 5, "does not take it"},
		{"allowed_tools on acp", []string{"    kind: acp", "    command: x", "    allowed_tools: [Read]"}, "agents.coder.allowed_tools", 5, "allowed_tools is a Claude Code setting"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lines := append([]string{"agents:", "  coder:"}, tc.lines...)
			got := problemsOf(t, src(append(lines, bot...)...), nil)
			if len(got) != 1 || got[0].Path != tc.path || got[0].Line != tc.line || !strings.Contains(got[0].Msg, tc.msg) {
				t.Errorf("problems:\n%swant one at line %d, %s: …%s…", fmtProblems(got), tc.line, tc.path, tc.msg)
			}
		})
	}
}

// TestBotAgents: bots[].agents lists the profiles !agent may move a
// conversation to; the default need not be listed; an unknown or repeated
// name is refused at its line; a change is a live reload of the bot.
func TestBotAgents(t *testing.T) {
	agents := []string{"agents:", "  coder: {}", "  gemini: {kind: acp, command: gemini}"}
	cfg := mustParse(t, src(append(agents, "bots:", "  - name: b", "    platform: discord", "    agent: coder",
		"    agents: [gemini]", "    discord: {token: t}")...), nil)
	if b := cfg.Bot("b"); strings.Join(b.Agents, ",") != "gemini" {
		t.Fatalf("agents: %q", b.Agents)
	}
	if sum := cfg.Summary(); !strings.Contains(sum, "agents=gemini") {
		t.Errorf("summary does not show the bot's agents:\n%s", sum)
	}
	for _, tc := range []struct {
		name, list, path, msg string
	}{
		{"unknown", "[gemini, codex]", "bots[0].agents[1]", `agent "codex" is not defined`},
		{"twice", "[gemini, gemini]", "bots[0].agents[1]", "listed twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := problemsOf(t, src(append(agents, "bots:", "  - name: b", "    platform: discord", "    agent: coder",
				"    agents: "+tc.list, "    discord: {token: t}")...), nil)
			if len(got) != 1 || got[0].Path != tc.path || got[0].Line != 8 || !strings.Contains(got[0].Msg, tc.msg) {
				t.Errorf("problems:\n%swant one at line 8, %s: …%s…", fmtProblems(got), tc.path, tc.msg)
			}
		})
	}
	next := mustParse(t, src(append(agents, "bots:", "  - {name: b, platform: discord, agent: coder, discord: {token: t}}")...), nil)
	if d := Compare(cfg, next); !strings.Contains(fmt.Sprint(d), "bots[b].agents") {
		t.Errorf("diff misses bots[b].agents: %+v", d)
	}
}
