package config

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestEnvInConfig: references are expanded in every kind of scalar before
// it is interpreted, with defaults and escapes.
func TestEnvInConfig(t *testing.T) {
	data := src(
		"data_dir: ${DATA:-/srv/bridge}",
		"agents:",
		"  coder:",
		"    model: ${MODEL:-sonnet}",
		"    max_live: ${MAX_LIVE}",
		"    idle_timeout: ${IDLE:-5m}",
		"    allow_bypass: ${BYPASS:-false}",
		"    append_system_prompt: \"Budget: $$10 per ${UNIT:-day}\"",
		"    args: [\"--name=${USER_NAME}\"]",
		"    env: {API_KEY: \"${KEY}\"}",
		"bots:",
		"  - name: ${BOT_NAME:-team}",
		"    platform: slack",
		"    agent: coder",
		"    slack: {bot_token: \"${SLACK_BOT_TOKEN}\", app_token: \"${SLACK_APP_TOKEN}\"}",
	)
	c := mustParse(t, data, map[string]string{
		"MAX_LIVE": "3", "USER_NAME": "ann", "KEY": "k-123",
		"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1", "MODEL": "",
	})
	a := c.Agents["coder"]
	checks := []struct{ name, got, want string }{
		{"data_dir", c.DataDir, "/srv/bridge"},
		{"model (empty var falls back)", a.Model, "sonnet"},
		{"max_live", strconv.Itoa(a.MaxLive), "3"},
		{"idle_timeout", a.IdleTimeout.String(), "5m0s"},
		{"append_system_prompt", a.AppendSystemPrompt, "Budget: $10 per day"},
		{"args", strings.Join(a.Args, " "), "--name=ann"},
		{"env", a.Env["API_KEY"], "k-123"},
		{"bot name", c.Bots[0].Name, "team"},
		{"bot_token", settingsOf(c.Bots[0])["bot_token"], "xoxb-1"},
		{"app_token", settingsOf(c.Bots[0])["app_token"], "xapp-1"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %q, want %q", ch.name, ch.got, ch.want)
		}
	}
	if a.AllowBypass {
		t.Error("allow_bypass = true, want the default false")
	}
}

// TestEnvValuesNeverInProblems: values that come from the environment are
// never echoed in problems; the reference as written is shown instead.
func TestEnvValuesNeverInProblems(t *testing.T) {
	secret := "hunter2-very-secret"
	data := src(
		"log: {level: \"${SECRET}\"}",
		"agents:",
		"  coder:",
		"    max_live: ${SECRET}",
		"    idle_timeout: ${SECRET}",
		"    permission_mode: \"${SECRET}\"",
		"bots:",
		"  - name: b",
		"    platform: \"${SECRET}\"",
		"    agent: \"x${SECRET}\"",
		"    verbosity: ${SECRET}",
		"  - name: c",
		"    platform: discord",
		"    agent: coder",
		"    discord: {token: t, api_url: \"${SECRET}\"}",
		"http: {listen: \"${SECRET}\"}",
	)
	got := problemsOf(t, data, map[string]string{"SECRET": secret})
	if len(got) != 9 {
		t.Errorf("got %d problems, want 9:\n%s", len(got), fmtProblems(got))
	}
	for _, p := range got {
		if strings.Contains(p.Msg, "hunter2") {
			t.Errorf("problem leaks the env value: %s", p)
		}
		if !strings.Contains(p.Msg, "${SECRET}") {
			t.Errorf("problem does not show the reference as written: %s", p)
		}
	}
	paths := make([]string, 0, len(got))
	for _, p := range got {
		paths = append(paths, p.Path)
	}
	for _, want := range []string{"log.level", "agents.coder.max_live", "agents.coder.idle_timeout", "agents.coder.permission_mode",
		"bots[0].platform", "bots[0].agent", "bots[0].verbosity", "bots[1].discord.api_url", "http.listen"} {
		if !slices.Contains(paths, want) {
			t.Errorf("no problem at %s; got:\n%s", want, fmtProblems(got))
		}
	}
}
