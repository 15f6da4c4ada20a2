package config

import (
	"errors"
	"strings"
	"testing"
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
	c, err := Parse(data, "bridge.yaml", envOf(env))
	if err != nil {
		t.Fatalf("Parse: unexpected error:\n%v", err)
	}
	return c
}

// problemsOf parses data and returns its problems, failing if it is valid.
func problemsOf(t *testing.T, data []byte, env map[string]string) []Problem {
	t.Helper()
	c, err := Parse(data, "bridge.yaml", envOf(env))
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
