package profile

import (
	"go.yaml.in/yaml/v3"

	"github.com/agentbridge/agentbridge/config/decode"
	"github.com/agentbridge/agentbridge/config/policy"
)

// Decode decodes the profile called name (yaml agents.NAME, the mapping v
// at path p) and fills in the defaults of the keys it lacks; Finish checks
// it once the whole file is decoded.
func Decode(d *decode.Decoder, name string, v *yaml.Node, p string) *Agent {
	a := &Agent{
		Name:            name,
		IdleTimeout:     DefaultIdleTimeout,
		ApprovalTimeout: DefaultApprovalTimeout,
		MaxLive:         DefaultMaxLive,
		WarmSpares:      DefaultWarmSpares,
		MaxWarmSpares:   DefaultMaxWarmSpares,
		SpareMemory:     DefaultSpareMemory,
		Resources:       Resources{Memory: DefaultMemory, Processes: DefaultProcesses, CPU: DefaultCPU},
	}
	d.Fields(v, p, map[string]decode.Field{
		"kind":                 d.Str(&a.Kind),
		"command":              d.Str(&a.Command),
		"args":                 d.StrList(&a.Args),
		"workdir":              d.Str(&a.Workdir),
		"home":                 d.Str(&a.Home),
		"model":                d.Str(&a.Model),
		"permission_mode":      d.Str(&a.PermissionMode),
		"allow_bypass":         d.Bool(&a.AllowBypass),
		"allowed_tools":        d.StrList(&a.AllowedTools),
		"disallowed_tools":     d.StrList(&a.DisallowedTools),
		"append_system_prompt": d.Str(&a.AppendSystemPrompt),
		"max_turns":            d.Int(&a.MaxTurns),
		"idle_timeout":         d.Duration(&a.IdleTimeout),
		"approval_timeout":     d.Duration(&a.ApprovalTimeout),
		"max_live":             d.Int(&a.MaxLive),
		"warm_spares":          warmSpares(d, a),
		"max_warm_spares":      d.Int(&a.MaxWarmSpares),
		"spare_memory":         d.ByteSize(&a.SpareMemory),
		"env":                  envSection(d, &a.Env),
		"sandbox":              d.Str(&a.Sandbox),
		"worktree":             d.Bool(&a.Worktree),
		"resources":            resourcesSection(d, &a.Resources),
		"network":              networkSection(d, &a.Network),
		"agent_schedules":      d.Str(&a.AgentSchedules),
		"mcp_servers":          mcpServersSection(d, &a.MCPServers),
		"sandbox_binds":        sandboxBindsSection(d, &a.SandboxBinds),
		"rules":                rulesSection(d, &a.Rules),
	})
	return a
}

// envSection decodes agents.*.env: each name a valid environment
// variable name, each value a string (null: set but empty).
func envSection(d *decode.Decoder, dst *map[string]string) decode.Field {
	return func(v *yaml.Node, ep string) {
		*dst = map[string]string{}
		d.Pairs(v, ep, func(key string, k, v *yaml.Node) {
			kp := decode.Child(ep, key)
			d.SetLine(kp, k.Line)
			if !decode.ValidEnvName(key) {
				d.Addf(k.Line, kp, "bad environment variable name")
				return
			}
			if s, ok := d.Scalar(v, kp, "a string"); ok {
				(*dst)[key] = s
			} else if !d.IsBad(kp) {
				(*dst)[key] = "" // null: set but empty
			}
		})
	}
}

// sandboxBindsSection decodes agents.*.sandbox_binds: a path each, with
// mode ro (the default) or rw.
func sandboxBindsSection(d *decode.Decoder, dst *[]SandboxBind) decode.Field {
	return func(v *yaml.Node, bp string) {
		d.List(v, bp, "sandbox_binds", func(item *yaml.Node, ip string) {
			var b SandboxBind
			var mode string
			if d.MappingItem(item, ip) {
				d.Fields(item, ip, map[string]decode.Field{
					"path": d.Str(&b.Path),
					"mode": d.Str(&mode),
				})
			}
			if mode != "" {
				d.OneOf(decode.Child(ip, "mode"), mode, "mode", "ro", "rw")
			}
			b.Writable = mode == "rw"
			*dst = append(*dst, b)
		})
	}
}

// rulesSection decodes agents.*.rules: tool, match and action each;
// Finish checks them.
func rulesSection(d *decode.Decoder, dst *[]policy.Rule) decode.Field {
	return func(v *yaml.Node, rp string) {
		d.List(v, rp, "rules", func(item *yaml.Node, ip string) {
			var r policy.Rule
			if d.MappingItem(item, ip) {
				d.Fields(item, ip, map[string]decode.Field{
					"tool":   d.Str(&r.Tool),
					"match":  d.Str(&r.Match),
					"action": d.Str(&r.Action),
				})
			}
			*dst = append(*dst, r)
		})
	}
}
