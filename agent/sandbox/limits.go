package sandbox

import (
	"fmt"
	"math"
	"strings"
)

// Limits bound one agent process and everything it starts (the config's
// agents.*.resources). A zero field is "no limit".
type Limits struct {
	Memory    int64   // bytes, swap included (none allowed)
	Processes int     // processes and threads
	CPU       float64 // share of the CPU in cores when the machine is busy (a weight, not a ceiling)
}

// IsZero reports whether l sets no limit at all.
func (l Limits) IsZero() bool { return l.Memory <= 0 && l.Processes <= 0 && l.CPU <= 0 }

// Limit names, as in metrics and LimitHit events.
const (
	LimitMemory    = "memory"
	LimitProcesses = "processes"
	LimitCPU       = "cpu"
)

// set lists the names of the limits l sets, in a fixed order.
func (l Limits) set() []string {
	var out []string
	if l.Memory > 0 {
		out = append(out, LimitMemory)
	}
	if l.Processes > 0 {
		out = append(out, LimitProcesses)
	}
	if l.CPU > 0 {
		out = append(out, LimitCPU)
	}
	return out
}

// Describe says l for people: "memory 512 MiB, 128 processes, CPU 1".
func (l Limits) Describe() string {
	var parts []string
	for _, name := range l.set() {
		parts = append(parts, l.describeOne(name))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// describeOne says the limit named name.
func (l Limits) describeOne(name string) string {
	switch name {
	case LimitMemory:
		return "memory " + FormatBytes(l.Memory)
	case LimitProcesses:
		return fmt.Sprintf("%d processes", l.Processes)
	default:
		return fmt.Sprintf("CPU %g", l.CPU)
	}
}

// FormatBytes says n bytes in the largest binary unit that keeps it short:
// "4 GiB", "512 MiB", "1.5 GiB", "100 B".
func FormatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	f, i := float64(n), 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d %s", int64(f), units[i])
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}

// Enforcement says which of a profile's limits hold, for the start-up log,
// !status and /healthz.
type Enforcement struct {
	Mechanism string   // "cgroup v2", "cgroup v1" or "none"
	Enforced  []string // limit names in force for the agent as a whole
	Missing   []string // limit names configured but not enforced for the agent as a whole
	Why       string   // why Missing is not empty ("" otherwise)
	// DataLimit, when not 0, is the RLIMIT_DATA each process of the agent
	// gets instead of the missing memory cap: one huge allocation fails,
	// but processes together can still use more (see PerProcessMemory).
	DataLimit int64
}

// MinDataLimit is the least RLIMIT_DATA given instead of a memory cap: the
// Claude Code CLI 2.1.330 fails its first turn below about 1 GiB (measured:
// 512 MiB fails, 1 GiB works).
const MinDataLimit int64 = 1 << 30

// PerProcessMemory is the RLIMIT_DATA given to each process of an agent
// whose memory cap cannot be enforced as a whole: the cap, at least
// MinDataLimit. RLIMIT_AS is not used: V8 reserves over 8 GiB of address
// space for WebAssembly and Java over 1 GiB, so tools would fail.
func PerProcessMemory(memory int64) int64 { return max(memory, MinDataLimit) }

// Summary says e for people, e.g. "memory 512 MiB, 128 processes, CPU 1
// (cgroup v1)" or "⚠️ not enforced: memory 4 GiB, 512 processes (no usable
// cgroup: …)".
func (e Enforcement) Summary(l Limits) string {
	var on, off []string
	for _, n := range e.Enforced {
		on = append(on, l.describeOne(n))
	}
	for _, n := range e.Missing {
		off = append(off, l.describeOne(n))
	}
	var out []string
	if len(on) > 0 {
		out = append(out, strings.Join(on, ", ")+" ("+e.Mechanism+")")
	}
	if len(off) > 0 {
		out = append(out, "⚠️ not enforced: "+strings.Join(off, ", ")+" ("+e.Why+")")
	}
	if e.DataLimit > 0 {
		out = append(out, "only "+FormatBytes(e.DataLimit)+" of data per process (RLIMIT_DATA)")
	}
	if len(out) == 0 {
		return "none configured"
	}
	return strings.Join(out, "; ")
}

// Counters are a cgroup's limit events since it was created.
type Counters struct {
	OOMKills     int64 // processes killed by the memory cap
	ForkRefusals int64 // forks and thread creations refused by the process cap
}

// cpuWeight is cgroup v2's cpu.weight for a share of cores: 100 per core
// (the default weight of a cgroup is 100), within 1..10000.
func cpuWeight(cores float64) int {
	return int(min(10000, max(1, math.Round(cores*100))))
}

// cpuShares is cgroup v1's cpu.shares for a share of cores: 1024 per core
// (the default), at least 2.
func cpuShares(cores float64) int {
	return int(min(262144, max(2, math.Round(cores*1024))))
}
