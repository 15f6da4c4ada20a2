package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/adapters/discord"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack"
	"github.com/agentbridge/agentbridge/bridges/app"
	"github.com/agentbridge/agentbridge/config"
)

// secrets are the values in exampleEnv that must never be printed.
func secrets() []string {
	var out []string
	for _, name := range []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "DISCORD_BOT_TOKEN", "ANTHROPIC_API_KEY"} {
		v, _ := exampleEnv(name)
		out = append(out, v)
	}
	return out
}

// parseExample parses the embedded example with the bridge's platforms.
func parseExample(t *testing.T) *config.Config {
	t.Helper()
	c, err := config.Parse(config.Example(), "bridge.yaml", exampleEnv, app.ConfigPlatforms())
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

// TestNoSecretsInOutput formats the example config every way a caller
// might and checks that no token or env value appears.
func TestNoSecretsInOutput(t *testing.T) {
	t.Parallel()
	c := parseExample(t)
	sc, dc, agent := c.Bots[0].Settings.(*slack.Config), c.Bots[1].Settings.(*discord.Config), c.Agents["coder"]

	var logs bytes.Buffer
	for _, h := range []slog.Handler{slog.NewJSONHandler(&logs, nil), slog.NewTextHandler(&logs, nil)} {
		slog.New(h).Info("config", "config", c, "bot", c.Bots[0], "bot2", c.Bots[1], "slack", sc, "discord", dc,
			"agent", agent, "agentval", *agent, "slackval", *sc)
	}
	outputs := map[string]string{
		"Summary": c.Summary(),
		"slog":    logs.String(),
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		for name, v := range map[string]any{
			"config": c, "config value": *c, "bots": c.Bots, "bot value": *c.Bots[0], "bot": c.Bots[1],
			"slack": sc, "slack value": *sc, "discord": dc, "discord value": *dc,
			"agent": agent, "agent value": *agent, "agents": c.Agents,
		} {
			outputs[name+" "+verb] = fmt.Sprintf(verb, v)
		}
	}
	for name, out := range outputs {
		for _, s := range secrets() {
			if strings.Contains(out, s) {
				t.Errorf("%s leaks a secret: %s", name, out)
			}
		}
	}
	// The redacted forms still say what is there.
	if s := fmt.Sprint(sc); !strings.Contains(s, "bot_token:<redacted>") || !strings.Contains(s, "api_url:https://slack.com/api/") {
		t.Errorf("slack formats as %q", s)
	}
	if s := fmt.Sprint(discord.Config{}); !strings.Contains(s, "token:<empty>") {
		t.Errorf("empty discord token formats as %q", s)
	}
	if !strings.Contains(logs.String(), `"ANTHROPIC_API_KEY":"<redacted>"`) {
		t.Errorf("agent LogValue should name env keys with redacted values:\n%s", logs.String())
	}
}

func TestExampleSummary(t *testing.T) {
	t.Parallel()
	c := parseExample(t)
	s := c.Summary()
	for _, want := range []string{
		"bots (3):",
		"  team-slack: platform=slack agent=coder verbosity=compact",
		"  team-discord: platform=discord agent=coder",
		"  phone: platform=whatsapp agent=coder verbosity=compact channels=any users=+15551234567",
		"whatsapp-phone.db approvals=numbers",
		"agents (1):",
		"  coder: command=claude",
		"idle_timeout=30m approval_timeout=10m",
		"env=ANTHROPIC_API_KEY",
		"http: listen=127.0.0.1:9464",
		"bridge.db",
		"retention: 90d",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
}

func TestJSONRedacted(t *testing.T) {
	t.Parallel()
	c := parseExample(t)
	out, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets() {
		if strings.Contains(string(out), s) {
			t.Fatalf("json.Marshal leaks a secret: %s", out)
		}
	}
	for _, want := range []string{`"BotToken":"<redacted>"`, `"Token":"<redacted>"`, `"ANTHROPIC_API_KEY":"<redacted>"`, `"Name":"team-slack"`} {
		want = strings.NewReplacer("<", `\u003c`, ">", `\u003e`).Replace(want) // encoding/json's HTML escaping
		if !strings.Contains(string(out), want) {
			t.Errorf("json lacks %s: %s", want, out)
		}
	}
}
