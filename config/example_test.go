package config

import (
	"regexp"
	"strings"
	"testing"
)

func TestExampleLoads(t *testing.T) {
	c := mustParse(t, Example(), exampleEnv)
	if len(c.Bots) != 3 || c.Bots[0].Platform != "slack" || c.Bots[1].Platform != "discord" || c.Bots[2].Platform != "whatsapp" {
		t.Fatalf("bots = %v, want the slack, the discord and the whatsapp bot", c.Bots)
	}
	if wa := c.Bots[2]; wa.Name != "phone" || settingsOf(wa)["platform"] != "whatsapp" || len(wa.Access.Users) != 1 || wa.Access.Users[0] != "+15551234567" {
		t.Errorf("whatsapp bot = %v %+v %+v", wa, wa.Settings, wa.Access)
	}
	if got := settingsOf(c.Bots[0])["bot_token"]; got != exampleEnv["SLACK_BOT_TOKEN"] {
		t.Errorf("slack bot_token = %q, want it from SLACK_BOT_TOKEN", got)
	}
	if got := settingsOf(c.Bots[1])["token"]; got != exampleEnv["DISCORD_BOT_TOKEN"] {
		t.Errorf("discord token = %q, want it from DISCORD_BOT_TOKEN", got)
	}
	if got := c.Agents["coder"].Env["ANTHROPIC_API_KEY"]; got != exampleEnv["ANTHROPIC_API_KEY"] {
		t.Errorf("coder env ANTHROPIC_API_KEY = %q", got)
	}
	if got, ok := c.Agents["coder"].Env["CLAUDE_CODE_OAUTH_TOKEN"]; !ok || got != "" {
		t.Errorf("coder env CLAUDE_CODE_OAUTH_TOKEN = %q, %v; want present and empty without the variable", got, ok)
	}
	if got := len(c.Agents["coder"].Rules); got == 0 {
		t.Error("the example should show policy rules")
	}
}

// TestExampleNeedsItsEnv: without the environment the example reports
// exactly the three unset platform token variables; the agent's
// credentials (API key or OAuth token) are optional for check-config.
func TestExampleNeedsItsEnv(t *testing.T) {
	got := problemsOf(t, Example(), nil)
	if len(got) != 3 {
		t.Fatalf("got %d problems, want 3 unset variables:\n%s", len(got), fmtProblems(got))
	}
	for _, p := range got {
		if !strings.Contains(p.Msg, "is not set") {
			t.Errorf("unexpected problem: %s", p)
		}
	}
}

// TestExampleCoversEveryKey: each key of the schema appears in the example.
func TestExampleCoversEveryKey(t *testing.T) {
	keys := []string{
		"data_dir", "retention", "log", "level", "format", "http", "listen", "agents",
		"command", "args", "workdir", "home", "model", "permission_mode", "allow_bypass",
		"allowed_tools", "disallowed_tools", "append_system_prompt", "max_turns",
		"idle_timeout", "approval_timeout", "max_live", "warm_spares", "env", "rules", "tool", "match", "action",
		"sandbox", "sandbox_binds", "path", "mode", "worktree",
		"limits", "bot", "per_user", "total", "usd_per_day", "usd_per_month", "turns_per_hour", "exempt_admins", "tz",
		"bots", "name", "platform", "agent", "verbosity", "slack", "bot_token", "app_token", "api_url",
		"discord", "token", "whatsapp", "device_store", "approvals", "web", "role", "trusted_proxies",
		"access", "channels", "users", "approvers", "admins",
	}
	ex := string(Example())
	for _, k := range keys {
		if !regexp.MustCompile(`(?m)(^|[\s{,])` + k + `:`).MatchString(ex) {
			t.Errorf("example does not show key %q", k)
		}
	}
}

func TestExampleReturnsACopy(t *testing.T) {
	a := Example()
	a[0] = 'X'
	if Example()[0] == 'X' {
		t.Error("Example() exposes the embedded bytes")
	}
}
