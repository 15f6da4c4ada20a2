package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/config/decode"
)

// src joins lines into a YAML document; line i of the result is lines[i-1].
func src(lines ...string) []byte { return []byte(strings.Join(lines, "\n") + "\n") }

// envOf returns a lookupEnv backed by vars.
func envOf(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

// exampleEnv sets every variable the example config references.
var exampleEnv = map[string]string{
	"SLACK_BOT_TOKEN":   "xoxb-secret-slack-bot",
	"SLACK_APP_TOKEN":   "xapp-secret-slack-app",
	"DISCORD_BOT_TOKEN": "secret-discord-token",
	"ANTHROPIC_API_KEY": "sk-ant-secret-key",
}

// mustParse parses data (named dir/bridge.yaml) and fails on any problem.
func mustParse(t *testing.T, data []byte, env map[string]string) *Config {
	t.Helper()
	c, err := Parse(data, "bridge.yaml", envOf(env), testPlatforms)
	if err != nil {
		t.Fatalf("Parse: unexpected error:\n%v", err)
	}
	return c
}

// problemsOf parses data and returns its problems, failing if it is valid.
func problemsOf(t *testing.T, data []byte, env map[string]string) []decode.Problem {
	t.Helper()
	c, err := Parse(data, "bridge.yaml", envOf(env), testPlatforms)
	if err == nil {
		t.Fatalf("Parse succeeded, want problems; config: %v", c)
	}
	if c != nil {
		t.Errorf("Parse returned a config together with an error")
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error is %T, want *ValidationError: %v", err, err)
	}
	return ve.Problems
}

// testPlatforms stand in for the adapters' platforms (config cannot import
// them): slack, discord and whatsapp settings are decoded with their keys
// through a Section, and checked only as far as Section's helpers go (the
// adapters' tests check the rest); web has none.
var testPlatforms = []Platform{
	stubPlatform("slack", "bot_token", "app_token", "api_url"),
	stubPlatform("discord", "token", "api_url"),
	stubPlatform("whatsapp", "device_store", "approvals"),
	{Name: PlatformWeb},
}

// stubSettings are the decoded keys of a stub platform's settings.
type stubSettings map[string]string

func (s stubSettings) String() string  { return "stub" }
func (s stubSettings) Summary() string { return "" }

// settingsOf returns a bot's stub settings (nil when it has none).
func settingsOf(b *Bot) stubSettings {
	s, _ := b.Settings.(stubSettings)
	return s
}

// stubPlatform decodes the given string keys of its settings mapping; for
// a bot of the platform, keys ending in "token" are required secrets
// (Section.Secret) and api_url is a URL (Section.URL).
func stubPlatform(name string, keys ...string) Platform {
	return Platform{Name: name, Settings: func(s *Section) Settings {
		vals := make([]string, len(keys))
		strs := map[string]*string{}
		for i, k := range keys {
			strs[k] = &vals[i]
		}
		s.Fields(strs)
		out := stubSettings{"platform": name}
		for i, k := range keys {
			switch {
			case !s.Own():
			case strings.HasSuffix(k, "token"):
				s.Secret(k, vals[i])
			case k == "api_url":
				vals[i] = s.URL(k, vals[i], "https://chat.example/api/")
			}
			out[k] = vals[i]
		}
		return out
	}}
}
