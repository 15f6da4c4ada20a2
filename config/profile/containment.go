package profile

import (
	"cmp"

	"go.yaml.in/yaml/v3"

	"github.com/agentbridge/agentbridge/config/decode"
)

// Resources bounds one agent process and everything it starts (yaml
// agents.*.resources). The sandbox enforces them with cgroups where the
// bridge may create child cgroups, else with what per-process limits allow;
// the bridge says at start which are in force. A zero field is "no limit".
type Resources struct {
	// Memory is the memory cap in bytes (yaml memory: "4GiB", "512MiB",
	// "2G", a plain number of bytes, or 0 = none). Default 4 GiB.
	Memory int64
	// Processes caps the number of processes and threads (yaml processes).
	// Default 512.
	Processes int
	// CPU is the agent's share of the CPU when the machine is busy, in cores
	// (yaml cpu: 1, 0.5, 2). Default 1. It is a weight, not a ceiling: an
	// idle machine lends the rest.
	CPU float64
}

// Defaults of agents.*.resources.
const (
	DefaultMemory    int64   = 4 << 30
	DefaultProcesses         = 512
	DefaultCPU       float64 = 1
)

// Network modes (yaml agents.*.network.mode).
const (
	// NetworkProxy gives the agent its own network namespace whose only way
	// out is the bridge's egress proxy (the default).
	NetworkProxy = "proxy"
	// NetworkHost shares the host's network (no egress control).
	NetworkHost = "host"
	// NetworkNone gives the agent no network at all, not even the model API.
	NetworkNone = "none"
)

// Network says where an agent's connections may go (yaml agents.*.network).
type Network struct {
	Mode  string   // yaml mode: proxy (default) | host | none
	Allow []string // yaml allow: hosts, host:port, *.domain, IPs or CIDRs reachable even when private or loopback
	Deny  []string // yaml deny: the same forms, refused even when public (deny wins over allow)
}

// Agent schedule policies (yaml agents.*.agent_schedules): what happens when
// the agent itself asks for a schedule through its bridge tool.
const (
	AgentSchedulesAsk   = "ask"   // a person approves a card first (default)
	AgentSchedulesAllow = "allow" // created at once, announced in the conversation
	AgentSchedulesOff   = "off"   // refused
)

// resourcesSection decodes agents.*.resources.
func resourcesSection(d *decode.Decoder, dst *Resources) decode.Field {
	return func(v *yaml.Node, p string) {
		d.Fields(v, p, map[string]decode.Field{
			"memory":    d.ByteSize(&dst.Memory),
			"processes": d.Int(&dst.Processes),
			"cpu":       d.Number(&dst.CPU),
		})
	}
}

// networkSection decodes agents.*.network.
func networkSection(d *decode.Decoder, dst *Network) decode.Field {
	return func(v *yaml.Node, p string) {
		d.Fields(v, p, map[string]decode.Field{
			"mode":  d.Str(&dst.Mode),
			"allow": d.StrList(&dst.Allow),
			"deny":  d.StrList(&dst.Deny),
		})
	}
}

// checkContainment validates and defaults an agent's resources, network and
// agent_schedules.
func checkContainment(d *decode.Decoder, a *Agent, p string) {
	rp := decode.Child(p, "resources")
	if pp := decode.Child(rp, "processes"); a.Resources.Processes < 0 {
		d.Addf(d.LineOf(pp), pp, "must not be negative (0 = no limit)")
	} else if a.Resources.Processes > 0 && a.Resources.Processes < 16 {
		d.Addf(d.LineOf(pp), pp, "must be at least 16: the CLI alone runs a dozen threads (0 = no limit)")
	}
	if mp := decode.Child(rp, "memory"); a.Resources.Memory > 0 && a.Resources.Memory < 256<<20 {
		d.Addf(d.LineOf(mp), mp, "must be at least 256MiB: the CLI alone needs about 200 MB (0 = no limit)")
	}
	if cp := decode.Child(rp, "cpu"); a.Resources.CPU < 0 {
		d.Addf(d.LineOf(cp), cp, "must not be negative (0 = no share set)")
	}
	np := decode.Child(p, "network")
	a.Network.Mode = cmp.Or(a.Network.Mode, NetworkProxy)
	d.OneOf(decode.Child(np, "mode"), a.Network.Mode, "mode", NetworkProxy, NetworkHost, NetworkNone)
	for _, l := range []struct {
		key   string
		hosts []string
	}{{"allow", a.Network.Allow}, {"deny", a.Network.Deny}} {
		for i, h := range l.hosts {
			if err := CheckHostPattern(h); err != nil {
				hp := decode.Index(decode.Child(np, l.key), i)
				d.Addf(d.LineOf(hp), hp, "%v", err)
			}
		}
	}
	if a.Network.Mode == NetworkNone && a.Sandbox == SandboxNone {
		mp := decode.Child(np, "mode")
		d.Addf(d.LineOf(mp), mp, "network mode none needs a sandbox: with sandbox none the agent shares the host's network")
	}
	a.AgentSchedules = cmp.Or(a.AgentSchedules, AgentSchedulesAsk)
	d.OneOf(decode.Child(p, "agent_schedules"), a.AgentSchedules, "agent_schedules",
		AgentSchedulesAsk, AgentSchedulesAllow, AgentSchedulesOff)
}
