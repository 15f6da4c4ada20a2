package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
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
func (d *decoder) resourcesSection(dst *Resources) field {
	return func(v *yaml.Node, p string) {
		d.fields(v, p, map[string]field{
			"memory":    d.byteSize(&dst.Memory),
			"processes": d.integer(&dst.Processes),
			"cpu":       d.number(&dst.CPU),
		})
	}
}

// networkSection decodes agents.*.network.
func (d *decoder) networkSection(dst *Network) field {
	return func(v *yaml.Node, p string) {
		d.fields(v, p, map[string]field{
			"mode":  d.str(&dst.Mode),
			"allow": d.strList(&dst.Allow),
			"deny":  d.strList(&dst.Deny),
		})
	}
}

// byteSize decodes a size such as "4GiB", "512MiB", "2G", "1024" (bytes)
// or 0 into dst.
func (d *decoder) byteSize(dst *int64) field {
	return func(v *yaml.Node, path string) {
		s, ok := d.scalar(v, path, "a size")
		if !ok {
			return
		}
		n, err := ParseByteSize(s)
		if err != nil {
			d.addf(d.lines[path], path, "%v", err)
			return
		}
		*dst = n
	}
}

// byteUnits are the suffixes ParseByteSize accepts, longest first.
var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// ParseByteSize parses a size with an optional unit: "4GiB", "512MiB",
// "1.5G" (K, M, G, T are binary like KiB…; KB, MB, GB, TB decimal), "0",
// or a plain number of bytes.
func ParseByteSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) || f*float64(mult) > math.MaxInt64/2 {
		return 0, fmt.Errorf(`bad size %q (want e.g. "4GiB", "512MiB", or 0 for no limit)`, s)
	}
	return int64(f * float64(mult)), nil
}

// checkContainment validates and defaults an agent's resources, network and
// agent_schedules.
func (d *decoder) checkContainment(a *Agent, p string) {
	rp := child(p, "resources")
	if pp := child(rp, "processes"); a.Resources.Processes < 0 {
		d.addf(d.lineOf(pp), pp, "must not be negative (0 = no limit)")
	} else if a.Resources.Processes > 0 && a.Resources.Processes < 16 {
		d.addf(d.lineOf(pp), pp, "must be at least 16: the CLI alone runs a dozen threads (0 = no limit)")
	}
	if mp := child(rp, "memory"); a.Resources.Memory > 0 && a.Resources.Memory < 256<<20 {
		d.addf(d.lineOf(mp), mp, "must be at least 256MiB: the CLI alone needs about 200 MB (0 = no limit)")
	}
	if cp := child(rp, "cpu"); a.Resources.CPU < 0 {
		d.addf(d.lineOf(cp), cp, "must not be negative (0 = no share set)")
	}
	np := child(p, "network")
	a.Network.Mode = orDefault(a.Network.Mode, NetworkProxy)
	d.oneOf(child(np, "mode"), a.Network.Mode, "mode", NetworkProxy, NetworkHost, NetworkNone)
	for _, l := range []struct {
		key   string
		hosts []string
	}{{"allow", a.Network.Allow}, {"deny", a.Network.Deny}} {
		for i, h := range l.hosts {
			if err := CheckHostPattern(h); err != nil {
				hp := index(child(np, l.key), i)
				d.addf(d.lineOf(hp), hp, "%v", err)
			}
		}
	}
	if a.Network.Mode == NetworkNone && a.Sandbox == SandboxNone {
		mp := child(np, "mode")
		d.addf(d.lineOf(mp), mp, "network mode none needs a sandbox: with sandbox none the agent shares the host's network")
	}
	a.AgentSchedules = orDefault(a.AgentSchedules, AgentSchedulesAsk)
	d.oneOf(child(p, "agent_schedules"), a.AgentSchedules, "agent_schedules",
		AgentSchedulesAsk, AgentSchedulesAllow, AgentSchedulesOff)
}
