package config

import (
	"regexp"
	"strings"
	"testing"
)

func TestExampleLoads(t *testing.T) {
	c := mustParse(t, Example(), exampleEnv)
	if len(c.Bots) != 2 || c.Bots[0].Platform != PlatformSlack || c.Bots[1].Platform != PlatformDiscord {
		t.Fatalf("bots = %v, want the slack and the discord bot", c.Bots)
	}
	for _, b := range c.Bots {
		if b.Platform == PlatformWhatsApp {
			t.Errorf("the example must not enable a whatsapp bot (not implemented yet): %v", b)
		}
	}
	if got := c.Bots[0].Slack.BotToken; got != exampleEnv["SLACK_BOT_TOKEN"] {
		t.Errorf("slack bot_token = %q, want it from SLACK_BOT_TOKEN", got)
	}
	if got := c.Bots[1].Discord.Token; got != exampleEnv["DISCORD_BOT_TOKEN"] {
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

// TestExampleCoversEveryKey: each key of the schema appears in the example
// (the whatsapp keys in the commented-out bot).
func TestExampleCoversEveryKey(t *testing.T) {
	keys := []string{
		"data_dir", "retention", "log", "level", "format", "http", "listen", "agents",
		"command", "args", "workdir", "home", "model", "permission_mode", "allow_bypass",
		"allowed_tools", "disallowed_tools", "append_system_prompt", "max_turns",
		"idle_timeout", "approval_timeout", "max_live", "warm_spares", "env", "rules", "tool", "match", "action",
		"sandbox", "sandbox_binds", "path", "mode",
		"bots", "name", "platform", "agent", "verbosity", "slack", "bot_token", "app_token", "api_url",
		"discord", "token", "whatsapp", "device_store",
		"access", "channels", "users", "approvers", "admins",
	}
	ex := string(Example())
	for _, k := range keys {
		if !regexp.MustCompile(`(?m)(^|[\s{,])` + k + `:`).MatchString(ex) {
			t.Errorf("example does not show key %q", k)
		}
	}
}

// TestExampleWhatsAppBlock: the commented-out WhatsApp bot is valid once
// uncommented, so the example stays accurate.
func TestExampleWhatsAppBlock(t *testing.T) {
	lines := strings.Split(string(Example()), "\n")
	in := false
	for i, l := range lines {
		if strings.HasPrefix(l, "  # - name: phone") {
			in = true
		}
		if in && strings.HasPrefix(l, "  # ") {
			lines[i] = "  " + strings.TrimPrefix(l, "  # ")
		}
	}
	if !in {
		t.Fatal("example has no commented-out whatsapp bot")
	}
	c := mustParse(t, []byte(strings.Join(lines, "\n")), exampleEnv)
	b := c.Bot("phone")
	if b == nil || b.Platform != PlatformWhatsApp || b.WhatsApp == nil || len(b.Access.Users) != 1 {
		t.Fatalf("uncommented whatsapp bot = %v", b)
	}
}

func TestExampleReturnsACopy(t *testing.T) {
	a := Example()
	a[0] = 'X'
	if Example()[0] == 'X' {
		t.Error("Example() exposes the embedded bytes")
	}
}
