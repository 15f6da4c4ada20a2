//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Cgroups puts each agent in a cgroup of its own, a child of the bridge's
// own cgroup in each hierarchy, where the memory, process and CPU limits
// of its profile hold for the agent and everything it starts. It never
// changes a cgroup above the bridge's own.
//
// Layout: OWN/NAME/agent-PID-N (PID: the bridge's), where OWN is the bridge's cgroup (per
// hierarchy on cgroup v1) and NAME is given by the caller, unique per
// bridge (CgroupName: from the data directory), so that a bridge clears
// what an earlier run of itself left (OpenCgroups) without touching
// another bridge's agents in the same cgroup.
//
// cgroup v2 is used when the bridge's own cgroup offers the memory and
// pids controllers; cgroup v1 when memory and pids hierarchies are
// mounted (the "hybrid" layout); otherwise none (Enforcement says why).
// Either needs the right to create cgroups below the bridge's own: root,
// or a delegated cgroup (systemd Delegate=yes, a container with its own
// cgroup namespace).
//
// A Cgroups is safe for concurrent use.
type Cgroups struct {
	version int               // 2, 1, or 0: no cgroups
	why     string            // why some controller (or all) cannot be used
	dirs    map[string]string // controller (memory, pids, cpu) → this bridge's group directory
	points  map[string]string // group directory → mount point of its hierarchy (for CgroupView)
	log     *slog.Logger
	seq     atomic.Uint64 // names agent cgroups
}

// controllers needed per limit.
var limitController = map[string]string{LimitMemory: "memory", LimitProcesses: "pids", LimitCPU: "cpu"}

// v2Leaf is where the bridge moves itself on cgroup v2 when its own cgroup
// holds processes, which forbids enabling controllers for children (the
// "no internal processes" rule).
const v2Leaf = "agentbridge-bridge"

// OpenCgroups finds the bridge's own cgroups, chooses v2 or v1, creates
// the group directory NAME below them and removes the agent cgroups a
// previous run with the same name left (killing what still runs there). It
// never fails: what cannot be used is reported by Enforcement and logged.
func OpenCgroups(name string, log *slog.Logger) *Cgroups {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Cgroups{dirs: map[string]string{}, log: log}
	if err := c.open(name); err != nil {
		c.version, c.dirs, c.why = 0, map[string]string{}, err.Error()
	}
	if c.version == 0 {
		log.Warn("agent resource limits: no usable cgroup; memory and process limits are not enforced", "why", c.why)
		return c
	}
	var ctrls []string
	for _, k := range []string{"memory", "pids", "cpu"} {
		if c.dirs[k] != "" {
			ctrls = append(ctrls, k)
		}
	}
	log.Info("agent resource limits", "cgroup", fmt.Sprintf("v%d", c.version), "controllers", strings.Join(ctrls, ","),
		"dir", c.dirs["memory"], "missing", c.why)
	return c
}

// open does OpenCgroups' work.
func (c *Cgroups) open(name string) error {
	if name == "" || strings.ContainsAny(name, "/.") {
		return fmt.Errorf("bad cgroup name %q", name)
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return fmt.Errorf("read /proc/self/cgroup: %w", err)
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return fmt.Errorf("read /proc/self/mountinfo: %w", err)
	}
	mounts := parseCgroupMounts(string(mi))
	v2, v1 := ownCgroupDirs(string(self), mounts)
	if v2 != "" {
		avail := strings.Fields(readString(filepath.Join(v2, "cgroup.controllers")))
		if has(avail, "memory") && has(avail, "pids") {
			return c.withPoints(c.openV2(v2, name, has(avail, "cpu")), mounts)
		}
	}
	if v1["memory"] != "" && v1["pids"] != "" {
		return c.withPoints(c.openV1(v1, name), mounts)
	}
	if v2 != "" {
		return fmt.Errorf("the bridge's cgroup v2 %s offers no memory and pids controllers, and no cgroup v1 memory and pids hierarchies are mounted", v2)
	}
	return errors.New("no cgroup v2 or v1 memory and pids hierarchies are mounted")
}

// withPoints records, after a successful open (err nil), the mount point
// of each group directory's hierarchy, and returns err.
func (c *Cgroups) withPoints(err error, mounts []cgroupMount) error {
	if err != nil {
		return err
	}
	c.points = map[string]string{}
	for _, dir := range c.dirs {
		c.points[dir] = mountPoint(dir, mounts)
	}
	return nil
}

// openV2 sets up OWN/NAME on cgroup v2 with memory, pids and, when
// offered, cpu enabled for its children.
func (c *Cgroups) openV2(own, name string, cpu bool) error {
	ctrls := "+memory +pids"
	if cpu {
		ctrls += " +cpu"
	}
	if err := enableV2(own, ctrls); err != nil {
		return err
	}
	group := filepath.Join(own, name)
	if err := os.Mkdir(group, 0o755); err != nil && !os.IsExist(err) {
		return fmt.Errorf("create cgroup %s: %w", group, err)
	}
	c.clearStale(group)
	if err := os.WriteFile(filepath.Join(group, "cgroup.subtree_control"), []byte(ctrls), 0); err != nil {
		return fmt.Errorf("enable %s in %s: %w", ctrls, group, err)
	}
	c.version = 2
	c.dirs["memory"], c.dirs["pids"] = group, group
	if cpu {
		c.dirs["cpu"] = group
	} else {
		c.why = "the cgroup offers no cpu controller"
	}
	return nil
}

// enableV2 enables ctrls for the children of own. When own holds
// processes (the bridge itself) the kernel refuses (EBUSY): the bridge
// then moves into the leaf OWN/agentbridge-bridge and tries again.
func enableV2(own, ctrls string) error {
	sub := filepath.Join(own, "cgroup.subtree_control")
	err := os.WriteFile(sub, []byte(ctrls), 0)
	if err == nil || !errors.Is(err, syscall.EBUSY) {
		if err != nil {
			return fmt.Errorf("enable %s in the bridge's cgroup %s: %w", ctrls, own, err)
		}
		return nil
	}
	leaf := filepath.Join(own, v2Leaf)
	if err := os.Mkdir(leaf, 0o755); err != nil && !os.IsExist(err) {
		return fmt.Errorf("create cgroup %s: %w", leaf, err)
	}
	if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
		return fmt.Errorf("move the bridge into %s: %w", leaf, err)
	}
	if err := os.WriteFile(sub, []byte(ctrls), 0); err != nil {
		return fmt.Errorf("enable %s in the bridge's cgroup %s (other processes share it?): %w", ctrls, own, err)
	}
	return nil
}

// openV1 sets up OWN/NAME in the memory, pids and (when mounted) cpu
// hierarchies of cgroup v1.
func (c *Cgroups) openV1(own map[string]string, name string) error {
	var missing []string
	for _, ctrl := range []string{"memory", "pids", "cpu"} {
		if own[ctrl] == "" {
			missing = append(missing, "no cgroup v1 "+ctrl+" hierarchy is mounted")
			continue
		}
		group := filepath.Join(own[ctrl], name)
		if err := os.Mkdir(group, 0o755); err != nil && !os.IsExist(err) {
			if ctrl == "cpu" {
				missing = append(missing, fmt.Sprintf("create cgroup %s: %v", group, err))
				continue
			}
			return fmt.Errorf("create cgroup %s: %w", group, err)
		}
		c.clearStale(group)
		c.dirs[ctrl] = group
	}
	c.version = 1
	c.why = strings.Join(missing, "; ")
	return nil
}

// clearStale removes the agent cgroups in group that an earlier run left.
func (c *Cgroups) clearStale(group string) {
	ents, err := os.ReadDir(group)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(group, e.Name())
		if err := removeCgroup(dir, time.Now().Add(2*time.Second)); err != nil {
			c.log.Warn("stale agent cgroup not removed", "dir", dir, "err", err)
		} else {
			c.log.Info("removed a stale agent cgroup of an earlier run", "dir", dir)
		}
	}
}

// Version is 2 or 1 for the cgroup version in use, 0 when none.
func (c *Cgroups) Version() int { return c.version }

// Enforcement says which of l hold for an agent started with c.
func (c *Cgroups) Enforcement(l Limits) Enforcement {
	e := Enforcement{Mechanism: "none"}
	if c != nil && c.version > 0 {
		e.Mechanism = fmt.Sprintf("cgroup v%d", c.version)
	}
	for _, n := range l.set() {
		if c != nil && c.dirs[limitController[n]] != "" {
			e.Enforced = append(e.Enforced, n)
		} else {
			e.Missing = append(e.Missing, n)
		}
	}
	if len(e.Missing) > 0 {
		e.Why = "no usable cgroup"
		if c != nil && c.why != "" {
			e.Why = c.why
		}
	}
	if c != nil && has(e.Missing, LimitMemory) { // see New
		e.DataLimit = PerProcessMemory(l.Memory)
	}
	return e
}

// Close removes the bridge's group directories; the agents' cgroups must
// be gone (Cgroup.Remove), else what remains is killed first.
func (c *Cgroups) Close() error {
	var errs []error
	seen := map[string]bool{}
	for _, dir := range c.dirs {
		if seen[dir] {
			continue
		}
		seen[dir] = true
		c.clearStale(dir)
		if err := os.Remove(dir); err != nil && !os.IsNotExist(err) {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", dir, err))
		}
	}
	return errors.Join(errs...)
}
