package config

import (
	"go.yaml.in/yaml/v3"

	"github.com/agentbridge/agentbridge/config/policy"
)

// This file maps YAML keys to struct fields. Keys are snake_case as in
// DESIGN §5; every mapping is strict (unknown keys are problems).

func (d *decoder) config(root *yaml.Node) *Config {
	c := &Config{}
	d.fields(root, "", map[string]field{
		"data_dir": d.str(&c.DataDir),
		"log": func(v *yaml.Node, p string) {
			d.fields(v, p, map[string]field{
				"level":  d.str(&c.Log.Level),
				"format": d.str(&c.Log.Format),
			})
		},
		"http": func(v *yaml.Node, p string) {
			d.fields(v, p, map[string]field{
				"listen": d.str(&c.HTTP.Listen),
			})
		},
		"agents": func(v *yaml.Node, p string) {
			c.Agents = map[string]*Agent{}
			d.pairs(v, p, func(name string, k, v *yaml.Node) {
				ap := child(p, name)
				d.lines[ap] = k.Line
				c.Agents[name] = d.agent(name, v, ap)
			})
		},
		"bots": func(v *yaml.Node, p string) {
			d.list(v, p, "bots", func(item *yaml.Node, bp string) {
				if d.mappingItem(item, bp) {
					c.Bots = append(c.Bots, d.bot(item, bp))
				} else {
					c.Bots = append(c.Bots, nil) // keep indexes aligned with paths
				}
			})
		},
		"retention":     d.retention(&c.Retention),
		"status_delay":  d.statusDelay(&c.StatusDelay),
		"delivery":      d.deliverySection(&c.Delivery),
		"store":         d.storeSection(&c.Store),
		"replicas":      d.replicasSection(&c.Replicas),
		"limits":        d.limitsSection(&c.Limits),
		"schedules":     d.schedules(&c.Schedules),
		"web":           d.webSection(&c.Web),
		"transcription": d.transcriptionSection(&c.Transcription),
	})
	return c
}

func (d *decoder) agent(name string, v *yaml.Node, p string) *Agent {
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
	d.fields(v, p, map[string]field{
		"command":              d.str(&a.Command),
		"args":                 d.strList(&a.Args),
		"workdir":              d.str(&a.Workdir),
		"home":                 d.str(&a.Home),
		"model":                d.str(&a.Model),
		"permission_mode":      d.str(&a.PermissionMode),
		"allow_bypass":         d.boolean(&a.AllowBypass),
		"allowed_tools":        d.strList(&a.AllowedTools),
		"disallowed_tools":     d.strList(&a.DisallowedTools),
		"append_system_prompt": d.str(&a.AppendSystemPrompt),
		"max_turns":            d.integer(&a.MaxTurns),
		"idle_timeout":         d.duration(&a.IdleTimeout),
		"approval_timeout":     d.duration(&a.ApprovalTimeout),
		"max_live":             d.integer(&a.MaxLive),
		"warm_spares":          d.warmSpares(a),
		"max_warm_spares":      d.integer(&a.MaxWarmSpares),
		"spare_memory":         d.byteSize(&a.SpareMemory),
		"env": func(v *yaml.Node, ep string) {
			a.Env = map[string]string{}
			d.pairs(v, ep, func(key string, k, v *yaml.Node) {
				kp := child(ep, key)
				d.lines[kp] = k.Line
				if !validEnvName(key) {
					d.addf(k.Line, kp, "bad environment variable name")
					return
				}
				if s, ok := d.scalar(v, kp, "a string"); ok {
					a.Env[key] = s
				} else if !d.bad[kp] {
					a.Env[key] = "" // null: set but empty
				}
			})
		},
		"sandbox":         d.str(&a.Sandbox),
		"worktree":        d.boolean(&a.Worktree),
		"resources":       d.resourcesSection(&a.Resources),
		"network":         d.networkSection(&a.Network),
		"agent_schedules": d.str(&a.AgentSchedules),
		"mcp_servers":     d.mcpServersSection(&a.MCPServers),
		"sandbox_binds": func(v *yaml.Node, bp string) {
			d.list(v, bp, "sandbox_binds", func(item *yaml.Node, ip string) {
				var b SandboxBind
				var mode string
				if d.mappingItem(item, ip) {
					d.fields(item, ip, map[string]field{
						"path": d.str(&b.Path),
						"mode": d.str(&mode),
					})
				}
				if mode != "" {
					d.oneOf(child(ip, "mode"), mode, "mode", "ro", "rw")
				}
				b.Writable = mode == "rw"
				a.SandboxBinds = append(a.SandboxBinds, b)
			})
		},
		"rules": func(v *yaml.Node, rp string) {
			d.list(v, rp, "rules", func(item *yaml.Node, ip string) {
				var r policy.Rule
				if d.mappingItem(item, ip) {
					d.fields(item, ip, map[string]field{
						"tool":   d.str(&r.Tool),
						"match":  d.str(&r.Match),
						"action": d.str(&r.Action),
					})
				}
				a.Rules = append(a.Rules, r)
			})
		},
	})
	return a
}

func (d *decoder) bot(v *yaml.Node, p string) *Bot {
	b := &Bot{}
	known := map[string]field{
		"name":      d.str(&b.Name),
		"platform":  d.str(&b.Platform),
		"agent":     d.str(&b.Agent),
		"verbosity": d.str(&b.Verbosity),
		"access": func(v *yaml.Node, ap string) {
			d.fields(v, ap, map[string]field{
				"channels":  d.strList(&b.Access.Channels),
				"users":     d.strList(&b.Access.Users),
				"approvers": d.strList(&b.Access.Approvers),
				"admins":    d.strList(&b.Access.Admins),
			})
		},
	}
	// A platform's settings mapping is kept as written: its adapter reads
	// it once the bot's platform is known (finishBot).
	for _, pl := range d.platforms {
		if pl.Settings != nil {
			known[pl.Name] = func(v *yaml.Node, sp string) { d.sections[sp] = v }
		}
	}
	d.fields(v, p, known)
	return b
}
