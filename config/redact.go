package config

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
)

// This file keeps secrets (agent env values, web tokens) out of fmt,
// slog and encoding/json output: every type that holds one formats itself
// with the secret replaced by "<redacted>" (or "<empty>" when unset).
// Consequently a Config cannot be round-tripped through JSON; it is never
// meant to be written back.

const redactedText = "<redacted>"

// Redact is how a secret is shown: "<redacted>", or "<empty>" when it is
// unset. Platform settings use it to redact their tokens (see Settings).
func Redact(s string) string {
	if s == "" {
		return "<empty>"
	}
	return redactedText
}

// envKeys returns the sorted names of an agent's env entries.
func envKeys(env map[string]string) []string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// String implements fmt.Stringer: the profile's main settings and the
// names (never the values) of its env entries.
func (a Agent) String() string {
	return fmt.Sprintf("agent{name:%s command:%s workdir:%s permission_mode:%s model:%s max_live:%d env:[%s] rules:%d}",
		a.Name, a.Command, a.Workdir, a.PermissionMode, a.Model, a.MaxLive, strings.Join(envKeys(a.Env), " "), len(a.Rules))
}

// GoString implements fmt.GoStringer (%#v) like String.
func (a Agent) GoString() string { return "config." + a.String() }

// LogValue implements slog.LogValuer with env values redacted.
func (a Agent) LogValue() slog.Value {
	env := make([]slog.Attr, 0, len(a.Env))
	for _, k := range envKeys(a.Env) {
		env = append(env, slog.String(k, redactedText))
	}
	return slog.GroupValue(
		slog.String("name", a.Name),
		slog.String("command", a.Command),
		slog.String("workdir", a.Workdir),
		slog.String("permission_mode", a.PermissionMode),
		slog.String("model", a.Model),
		slog.Int("max_live", a.MaxLive),
		slog.String("warm_spares", a.WarmSparesText()),
		slog.Duration("idle_timeout", a.IdleTimeout),
		slog.Duration("approval_timeout", a.ApprovalTimeout),
		slog.Int("rules", len(a.Rules)),
		slog.Attr{Key: "env", Value: slog.GroupValue(env...)})
}

// String implements fmt.Stringer: name, platform, agent and the
// platform section with its secrets redacted.
func (b Bot) String() string {
	var sec string
	if b.Settings != nil {
		sec = " " + b.Settings.String()
	}
	return fmt.Sprintf("bot{name:%s platform:%s agent:%s verbosity:%s%s}", b.Name, b.Platform, b.Agent, b.Verbosity, sec)
}

// GoString implements fmt.GoStringer (%#v) like String.
func (b Bot) GoString() string { return "config." + b.String() }

// LogValue implements slog.LogValuer: the bot's identity, no secrets.
func (b Bot) LogValue() slog.Value {
	return slog.GroupValue(slog.String("name", b.Name), slog.String("platform", b.Platform), slog.String("agent", b.Agent))
}

// Redacted JSON encodings, so that slog's JSON handler (which marshals
// values without LogValue, e.g. a whole Config) and json.Marshal never see
// a secret. The local types drop the methods to avoid recursion. Platform
// settings redact their own secrets (see Settings).

// MarshalJSON implements json.Marshaler with env values redacted.
func (a Agent) MarshalJSON() ([]byte, error) {
	type plain Agent
	if a.Env != nil {
		env := make(map[string]string, len(a.Env))
		for k := range a.Env {
			env[k] = redactedText
		}
		a.Env = env
	}
	if a.MCPServers != nil { // their env values are secrets too
		servers := make(map[string]MCPServer, len(a.MCPServers))
		for name, srv := range a.MCPServers {
			env := make(map[string]string, len(srv.Env))
			for k := range srv.Env {
				env[k] = redactedText
			}
			srv.Env = env
			servers[name] = srv
		}
		a.MCPServers = servers
	}
	return json.Marshal(plain(a))
}

// LogValue implements slog.LogValuer: a short overview without secrets
// (see Summary for the full picture).
func (c *Config) LogValue() slog.Value {
	bots := make([]string, 0, len(c.Bots))
	for _, b := range c.Bots {
		bots = append(bots, b.Name)
	}
	return slog.GroupValue(
		slog.String("data_dir", c.DataDir),
		slog.String("http_listen", c.HTTP.Listen),
		slog.Any("agents", slices.Sorted(maps.Keys(c.Agents))),
		slog.Any("bots", bots))
}
