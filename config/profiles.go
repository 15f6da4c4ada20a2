package config

import (
	"github.com/agentbridge/agentbridge/config/decode"
	"github.com/agentbridge/agentbridge/config/profile"
)

// The agent profiles (yaml agents.NAME) are decoded and checked by package
// config/profile; these names keep them part of the config's API.
type (
	Agent       = profile.Agent       // a named Claude Code CLI profile
	SandboxBind = profile.SandboxBind // an extra path a sandboxed agent sees
	Resources   = profile.Resources   // memory, processes and CPU of one agent
	Network     = profile.Network     // where an agent's connections may go
	MCPServer   = profile.MCPServer   // a stdio MCP server of a profile
	Problem     = decode.Problem      // one thing wrong with a config file
)

// Defaults and accepted values of agent profile keys (see package
// config/profile).
const (
	DefaultCommand         = profile.DefaultCommand
	DefaultWorkdir         = profile.DefaultWorkdir
	DefaultPermissionMode  = profile.DefaultPermissionMode
	DefaultIdleTimeout     = profile.DefaultIdleTimeout
	DefaultApprovalTimeout = profile.DefaultApprovalTimeout
	DefaultMaxLive         = profile.DefaultMaxLive
	DefaultWarmSpares      = profile.DefaultWarmSpares
	DefaultMaxWarmSpares   = profile.DefaultMaxWarmSpares
	DefaultSpareMemory     = profile.DefaultSpareMemory
	WarmSparesAuto         = profile.WarmSparesAuto
	DefaultMemory          = profile.DefaultMemory
	DefaultProcesses       = profile.DefaultProcesses
	DefaultCPU             = profile.DefaultCPU
	ReservedMCPServer      = profile.ReservedMCPServer

	SandboxBwrap = profile.SandboxBwrap
	SandboxNone  = profile.SandboxNone

	KindClaude = profile.KindClaude
	KindACP    = profile.KindACP

	ModeDefault     = profile.ModeDefault
	ModeAcceptEdits = profile.ModeAcceptEdits
	ModePlan        = profile.ModePlan
	ModeBypass      = profile.ModeBypass

	NetworkProxy = profile.NetworkProxy
	NetworkHost  = profile.NetworkHost
	NetworkNone  = profile.NetworkNone

	AgentSchedulesAsk   = profile.AgentSchedulesAsk
	AgentSchedulesAllow = profile.AgentSchedulesAllow
	AgentSchedulesOff   = profile.AgentSchedulesOff
)

// CheckHostPattern reports whether h is a usable network.allow/deny entry
// (see profile.CheckHostPattern).
func CheckHostPattern(h string) error { return profile.CheckHostPattern(h) }
