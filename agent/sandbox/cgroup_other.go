//go:build !linux

package sandbox

import (
	"log/slog"
	"os/exec"
)

// Cgroups exist only on Linux: elsewhere no limit is enforced and
// Enforcement says so.
type Cgroups struct{}

// OpenCgroups returns a Cgroups that enforces nothing, and logs it.
func OpenCgroups(name string, log *slog.Logger) *Cgroups {
	if log != nil {
		log.Warn("agent resource limits: cgroups exist only on Linux; memory and process limits are not enforced")
	}
	return &Cgroups{}
}

// Version is 0: no cgroups.
func (c *Cgroups) Version() int { return 0 }

// Enforcement reports every limit of l as missing.
func (c *Cgroups) Enforcement(l Limits) Enforcement {
	e := Enforcement{Mechanism: "none", Missing: l.set()}
	if len(e.Missing) > 0 {
		e.Why = "cgroups exist only on Linux"
	}
	return e
}

// Close does nothing.
func (c *Cgroups) Close() error { return nil }

// New returns nil: nothing to enforce with.
func (c *Cgroups) New(Limits) (*Cgroup, error) { return nil, nil }

// Cgroup is never made outside Linux; its methods accept nil.
type Cgroup struct{}

// Place does nothing.
func (g *Cgroup) Place(*exec.Cmd) (func(), error) { return func() {}, nil }

// Counters are zero.
func (g *Cgroup) Counters() Counters { return Counters{} }

// Remove does nothing.
func (g *Cgroup) Remove() error { return nil }

// Views is empty.
func (g *Cgroup) Views() []CgroupView { return nil }

// Dirs is empty.
func (g *Cgroup) Dirs() []string { return nil }

// CPU is 0: no CPU share without cgroups.
func (g *Cgroup) CPU() float64 { return 0 }

// SetCPU does nothing without cgroups.
func (g *Cgroup) SetCPU(float64) error { return nil }
