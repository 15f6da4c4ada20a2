package profile

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
)

// The profile's secrets (env values, its MCP servers' env values) are
// kept out of fmt, slog and encoding/json output: Agent formats itself
// with them replaced by "<redacted>".

const redactedText = "<redacted>"

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
