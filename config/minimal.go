package config

import _ "embed"

//go:embed minimal.yaml
var minimalYAML string

// Minimal returns the smallest useful configuration, printed by
// `bridge example-config -minimal` and written by `make run` on a fresh
// machine: one agent profile "coder" and one bot, the web console
// ("console", platform web), with no web users (an admin token is
// generated on first start). It loads cleanly with no environment
// variable set. The caller owns the returned slice.
func Minimal() []byte { return []byte(minimalYAML) }
