package config

import (
	"strings"
	"testing"
)

// TestForbiddenArgs: every flag that changes permissions, settings or what
// the bridge passes to the CLI is refused in agents.*.args, in both the
// "--flag value" and "--flag=value" forms, at its own line, with a message
// naming the key to use where there is one.
func TestForbiddenArgs(t *testing.T) {
	okBot := []string{"bots:", "  - {name: b, platform: discord, agent: coder, discord: {token: t}}"}
	cases := []struct {
		args []string // list items as written
		item int      // index of the refused item
		msg  string   // fragment of the message
	}{
		{[]string{"--dangerously-skip-permissions"}, 0, "--dangerously-skip-permissions is not allowed in args: it turns every permission check off; use permission_mode: bypassPermissions with allow_bypass: true"},
		{[]string{"--allow-dangerously-skip-permissions"}, 0, "allow_bypass: true"},
		{[]string{"--dangerously-future-flag"}, 0, "turns permission checks off"},
		{[]string{"--permission-mode", "bypassPermissions"}, 0, "use permission_mode"},
		{[]string{"--permission-mode=bypassPermissions"}, 0, "--permission-mode is not allowed in args: use permission_mode"},
		{[]string{"--permission-prompt-tool", "mcp__x__y"}, 0, "answers permission prompts itself"},
		{[]string{"--permission-prompt-tool=stdio"}, 0, "answers permission prompts itself"},
		{[]string{"--settings", "/etc/claude.json"}, 0, "use rules, allowed_tools and disallowed_tools"},
		{[]string{`--settings={"permissions":{"allow":["Bash"]}}`}, 0, "--settings is not allowed"},
		{[]string{"--setting-sources", "user,project,local"}, 0, "--setting-sources is not allowed"},
		{[]string{"--setting-sources=user"}, 0, "--setting-sources is not allowed"},
		{[]string{"--allowedTools", "Bash"}, 0, "use allowed_tools"},
		{[]string{"--allowed-tools=Bash(*)"}, 0, "use allowed_tools"},
		{[]string{"--disallowedTools=Read"}, 0, "use disallowed_tools"},
		{[]string{"--disallowed-tools", "Read"}, 0, "use disallowed_tools"},
		{[]string{"--add-dir", "/"}, 0, "--add-dir is not allowed"},
		{[]string{"--add-dir=/etc"}, 0, "--add-dir is not allowed"},
		{[]string{"--mcp-config", "mcp.json"}, 0, "--mcp-config is not allowed"},
		{[]string{"--strict-mcp-config"}, 0, "--strict-mcp-config is not allowed"},
		{[]string{"--plugin-dir=./p"}, 0, "hooks"},
		{[]string{"--session-id", "x"}, 0, "the bridge chooses the session"},
		{[]string{"--resume=abc"}, 0, "--resume is not allowed"},
		{[]string{"--continue"}, 0, "--continue is not allowed"},
		{[]string{"--fork-session"}, 0, "--fork-session is not allowed"},
		{[]string{"--no-session-persistence"}, 0, "needs them on disk"},
		{[]string{"--model", "opus"}, 0, "use model"},
		{[]string{"--model=opus"}, 0, "--model is not allowed in args: use model"},
		{[]string{"--append-system-prompt", "be nice"}, 0, "use append_system_prompt"},
		{[]string{"--append-system-prompt=be nice"}, 0, "use append_system_prompt"},
		{[]string{"--system-prompt", "x"}, 0, "use append_system_prompt"},
		{[]string{"--max-turns", "3"}, 0, "use max_turns"},
		{[]string{"--max-turns=3"}, 0, "use max_turns"},
		{[]string{"--input-format=text"}, 0, "stream-json"},
		{[]string{"--output-format", "json"}, 0, "stream-json"},
		{[]string{"--print"}, 0, "--print is not allowed"},
		{[]string{"-p"}, 0, "-p (--print) is not allowed"},
		{[]string{"-c"}, 0, "-c (--continue) is not allowed"},
		{[]string{"-r", "abc"}, 0, "-r (--resume) is not allowed"},
		{[]string{"-dp"}, 0, "-p (--print) is not allowed"},
		{[]string{"--remote-control"}, 0, "outside the bridge"},
		{[]string{"--verbose", "--effort", "high", "--model", "x"}, 3, "use model"}, // the item's own line
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			lines := []string{"agents:", "  coder:", "    args:"}
			for _, a := range tc.args {
				lines = append(lines, "      - '"+strings.ReplaceAll(a, "'", "''")+"'")
			}
			got := problemsOf(t, src(append(lines, okBot...)...), nil)
			wantPath := "agents.coder.args[" + string(rune('0'+tc.item)) + "]"
			if len(got) != 1 || got[0].Path != wantPath || got[0].Line != 4+tc.item || !strings.Contains(got[0].Msg, tc.msg) {
				t.Errorf("problems:\n%swant one at line %d, %s: …%s…", fmtProblems(got), 4+tc.item, wantPath, tc.msg)
			}
		})
	}
}

// TestAllowedArgs: flags that change neither permissions nor the protocol
// stay allowed, and values that look like options are not flags.
func TestAllowedArgs(t *testing.T) {
	for _, args := range [][]string{
		{"--verbose"},
		{"--effort", "high"},
		{"--fallback-model", "sonnet"},
		{"--debug"},
		{"-d"},
		{"--max-budget-usd", "-1"},
		{"--settingsx"}, // not a prefix match: only "--flag" and "--flag=…"
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			lines := []string{"agents:", "  coder:", "    args:"}
			for _, a := range args {
				lines = append(lines, "      - '"+a+"'")
			}
			lines = append(lines, "bots:", "  - {name: b, platform: discord, agent: coder, discord: {token: t}}")
			if _, err := Parse(src(lines...), "bridge.yaml", envOf(nil), testPlatforms); err != nil {
				t.Errorf("Parse: %v", err)
			}
		})
	}
}

// TestForbiddenArgAfterDroppedItem: an empty item before a forbidden flag
// does not shift the reported index or line.
func TestForbiddenArgAfterDroppedItem(t *testing.T) {
	data := src("agents:", "  coder:", "    args:", "      - ''", "      - --permission-mode=plan",
		"bots:", "  - {name: b, platform: discord, agent: coder, discord: {token: t}}")
	got := problemsOf(t, data, nil)
	if len(got) != 2 || got[0].Path != "agents.coder.args[0]" || got[1].Path != "agents.coder.args[1]" || got[1].Line != 5 {
		t.Errorf("problems:\n%s", fmtProblems(got))
	}
}
