package demo

import (
	"bytes"
	"errors"
	"log/slog"
	"maps"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/bridges/adapters/discord"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack"
	"github.com/agentbridge/agentbridge/cmd/bridge/internal/cli"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
)

func TestDemoAgentEnv(t *testing.T) {
	demo := map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:1", "ANTHROPIC_API_KEY": "test-key", "CLAUDE_CODE_MAX_RETRIES": "0"}
	tests := []struct {
		name    string
		profile map[string]string
		want    map[string]string
	}{
		{"empty profile", nil, demo},
		{"credentials and model switches are replaced, the rest kept",
			map[string]string{
				"ANTHROPIC_API_KEY": "sk-real", "CLAUDE_CODE_OAUTH_TOKEN": "oauth-real", "ANTHROPIC_BASE_URL": "https://proxy",
				"ANTHROPIC_AUTH_TOKEN": "x", "CLAUDE_CODE_USE_BEDROCK": "1", "GIT_AUTHOR_NAME": "bot", "TZ": "UTC",
			},
			map[string]string{
				"ANTHROPIC_BASE_URL": "http://127.0.0.1:1", "ANTHROPIC_API_KEY": "test-key", "CLAUDE_CODE_MAX_RETRIES": "0",
				"GIT_AUTHOR_NAME": "bot", "TZ": "UTC",
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := maps.Clone(tc.profile)
			got := agentEnv(tc.profile, demo)
			if !maps.Equal(got, tc.want) {
				t.Errorf("env %v\nwant %v", got, tc.want)
			}
			if !maps.Equal(tc.profile, before) {
				t.Errorf("the profile's env was modified: %v", tc.profile)
			}
		})
	}
}

// demoConfig is a valid config with the given bots, as config.Load makes it.
func demoConfig(listen string, bots ...*config.Bot) *config.Config {
	return &config.Config{
		HTTP: config.HTTP{Listen: listen},
		Agents: map[string]*profile.Agent{
			"coder": {Name: "coder", Env: map[string]string{"ANTHROPIC_API_KEY": "sk-real-secret", "TZ": "UTC"}},
			"other": {Name: "other"},
		},
		Bots: bots,
	}
}

func TestStartDemo(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	cfg := demoConfig("127.0.0.1:0",
		&config.Bot{Name: "team-slack", Platform: slack.Name, Agent: "coder"},
		&config.Bot{Name: "console", Platform: config.PlatformWeb, Agent: "coder"},
		&config.Bot{Name: "guild", Platform: discord.Name, Agent: "other"},
	)
	srv, err := Start(cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if len(cfg.Bots) != 1 || cfg.Bots[0].Name != "console" {
		var names []string
		for _, b := range cfg.Bots {
			names = append(names, b.Name)
		}
		t.Errorf("bots after demo: %v, want only the web console", names)
	}
	for _, name := range []string{"coder", "other"} {
		env := cfg.Agents[name].Env
		if env["ANTHROPIC_BASE_URL"] != srv.URL() || env["CLAUDE_CODE_MAX_RETRIES"] != "0" || env["ANTHROPIC_API_KEY"] == "sk-real-secret" {
			t.Errorf("profile %s env %v: not pointed at the demo model %s", name, env, srv.URL())
		}
	}
	out := logs.String()
	for _, want := range []string{"bot=team-slack platform=slack", "bot=guild platform=discord", "DEMO MODE", "model_url=" + srv.URL()} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "sk-real-secret") {
		t.Errorf("logs leak the profile's key:\n%s", out)
	}
}

func TestStartDemoRefuses(t *testing.T) {
	tests := []struct {
		name string
		cfg  *config.Config
		want string
	}{
		{"no web bot", demoConfig("127.0.0.1:0", &config.Bot{Name: "s", Platform: slack.Name, Agent: "coder"}),
			"platform: web"},
		{"no http listener", demoConfig("", &config.Bot{Name: "w", Platform: config.PlatformWeb, Agent: "coder"}),
			"http.listen"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := Start(tc.cfg, slog.New(slog.DiscardHandler))
			if err == nil {
				srv.Close()
				t.Fatal("demo mode started")
			}
			var ue cli.UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v (usage error: %v), want one naming %q", err, errors.As(err, &ue), tc.want)
			}
		})
	}
}
