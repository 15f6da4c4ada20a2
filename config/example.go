package config

import _ "embed"

//go:embed example.yaml
var example string

// Example returns the commented example configuration printed by
// `bridge example-config`. It covers every key and loads cleanly when
// SLACK_BOT_TOKEN, SLACK_APP_TOKEN, DISCORD_BOT_TOKEN and
// ANTHROPIC_API_KEY are set. The caller owns the returned slice.
func Example() []byte { return []byte(example) }
