package config

import "github.com/agentbridge/agentbridge/config/profile"

// The agent profiles (yaml agents.NAME) are decoded and checked by package
// config/profile, and importers name that package. These names are left
// only for cmd/bridge's containment building (egress.go) and the egress
// tests, which are being reworked elsewhere; they go once those name
// package profile too.
type (
	Agent   = profile.Agent   // a named Claude Code CLI profile
	Network = profile.Network // where an agent's connections may go
)

// Sandbox and network modes of agent profiles (see package config/profile).
const (
	SandboxNone = profile.SandboxNone

	NetworkProxy = profile.NetworkProxy
	NetworkHost  = profile.NetworkHost
	NetworkNone  = profile.NetworkNone
)

// CheckHostPattern reports whether h is a usable network.allow/deny entry
// (see profile.CheckHostPattern).
func CheckHostPattern(h string) error { return profile.CheckHostPattern(h) }
