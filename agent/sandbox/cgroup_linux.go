//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
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
// Layout: OWN/NAME/agent-N, where OWN is the bridge's cgroup (per
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
	v2, v1 := ownCgroupDirs(string(self), parseCgroupMounts(string(mi)))
	if v2 != "" {
		avail := strings.Fields(readString(filepath.Join(v2, "cgroup.controllers")))
		if has(avail, "memory") && has(avail, "pids") {
			return c.openV2(v2, name, has(avail, "cpu"))
		}
	}
	if v1["memory"] != "" && v1["pids"] != "" {
		return c.openV1(v1, name)
	}
	if v2 != "" {
		return fmt.Errorf("the bridge's cgroup v2 %s offers no memory and pids controllers, and no cgroup v1 memory and pids hierarchies are mounted", v2)
	}
	return errors.New("no cgroup v2 or v1 memory and pids hierarchies are mounted")
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
	if has(e.Missing, LimitMemory) {
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

// New creates an agent's cgroup with limits l in every hierarchy that
// enforces one of them. Without cgroups it returns a Cgroup without
// directories that only gives each process the RLIMIT_DATA of
// PerProcessMemory, or nil when l sets no memory cap. A nil c enforces
// nothing (nil). An error means the
// cgroup could not be made although the cgroups were usable at start: the
// agent must not start (fail closed).
func (c *Cgroups) New(l Limits) (*Cgroup, error) {
	if c == nil {
		return nil, nil
	}
	if c.version == 0 || len(c.Enforcement(l).Enforced) == 0 {
		if l.Memory > 0 {
			return &Cgroup{dataLimit: PerProcessMemory(l.Memory)}, nil
		}
		return nil, nil
	}
	name := fmt.Sprintf("agent-%d", c.seq.Add(1))
	g := &Cgroup{version: c.version}
	made := map[string]string{} // group dir → agent dir
	for _, lim := range c.Enforcement(l).Enforced {
		group := c.dirs[limitController[lim]]
		dir, ok := made[group]
		if !ok {
			dir = filepath.Join(group, name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				g.Remove()
				return nil, fmt.Errorf("create agent cgroup %s: %w", dir, err)
			}
			made[group] = dir
			g.dirs = append(g.dirs, dir)
		}
		if err := g.setLimit(dir, lim, l); err != nil {
			g.Remove()
			return nil, err
		}
	}
	return g, nil
}

// Cgroup is one agent's cgroup (one directory per hierarchy on v1).
type Cgroup struct {
	version   int // 0: no cgroup, only dataLimit
	dataLimit int64
	dirs      []string
	memDir    string // where the memory counters are ("" = no memory limit)
	pidsDir   string // where the pids counters are ("" = no process limit)
}

// setLimit writes limit lim of l into the agent cgroup dir.
func (g *Cgroup) setLimit(dir, lim string, l Limits) error {
	type file struct {
		name, value string
		optional    bool // absent when the kernel lacks swap accounting
	}
	var files []file
	switch {
	case lim == LimitMemory && g.version == 2:
		g.memDir = dir
		files = []file{{"memory.max", strconv.FormatInt(l.Memory, 10), false}, {"memory.swap.max", "0", true}}
	case lim == LimitMemory:
		g.memDir = dir
		v := strconv.FormatInt(l.Memory, 10)
		// memsw (memory+swap) must not be below the memory limit: set after it.
		files = []file{{"memory.limit_in_bytes", v, false}, {"memory.memsw.limit_in_bytes", v, true}}
	case lim == LimitProcesses:
		g.pidsDir = dir
		files = []file{{"pids.max", strconv.Itoa(l.Processes), false}}
	case lim == LimitCPU && g.version == 2:
		files = []file{{"cpu.weight", strconv.Itoa(cpuWeight(l.CPU)), false}}
	case lim == LimitCPU:
		files = []file{{"cpu.shares", strconv.Itoa(cpuShares(l.CPU)), false}}
	}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if f.optional {
			if _, err := os.Stat(p); err != nil {
				continue
			}
		}
		if err := os.WriteFile(p, []byte(f.value), 0); err != nil {
			return fmt.Errorf("set %s of agent cgroup: %w", p, err)
		}
	}
	return nil
}

// rlimitScript sets RLIMIT_DATA (ulimit -d, in KiB, soft and hard) to its
// first argument, then becomes the command after "--".
const rlimitScript = `ulimit -d "$1" || exit 126; shift 2; exec "$@"`

// placeScript joins the cgroups given as arguments before "--", then
// becomes the command after it: nothing of the agent runs before it is in
// its cgroups. The paths are arguments, never part of the code.
const placeScript = `while [ "$1" != -- ]; do echo $$ >"$1/cgroup.procs" || exit 126; shift; done; shift; exec "$@"`

// Place makes cmd (not started) start inside g, before it can run or
// start anything: on v2 through clone3's CLONE_INTO_CGROUP
// (SysProcAttr.UseCgroupFD), on v1 through /bin/sh joining the cgroups
// and then executing the command (same process id). Call the returned
// function after cmd.Start.
func (g *Cgroup) Place(cmd *exec.Cmd) (func(), error) {
	if g == nil {
		return func() {}, nil
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if g.version == 0 {
		args := []string{"sh", "-c", rlimitScript, "agentbridge-rlimit", strconv.FormatInt(g.dataLimit/1024, 10), "--", cmd.Path}
		cmd.Args = append(args, cmd.Args[1:]...)
		cmd.Path = "/bin/sh"
		return func() {}, nil
	}
	if g.version == 2 {
		fd, err := syscall.Open(g.dirs[0], syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("open agent cgroup %s: %w", g.dirs[0], err)
		}
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
		return func() { _ = syscall.Close(fd) }, nil
	}
	args := []string{"sh", "-c", placeScript, "agentbridge-cgroup"}
	args = append(args, g.dirs...)
	args = append(args, "--", cmd.Path)
	cmd.Args = append(args, cmd.Args[1:]...)
	cmd.Path = "/bin/sh"
	return func() {}, nil
}

// Counters reads g's limit events so far. Files that cannot be read
// count zero.
func (g *Cgroup) Counters() Counters {
	var c Counters
	if g == nil {
		return c
	}
	if g.memDir != "" {
		if g.version == 2 {
			c.OOMKills = counter(filepath.Join(g.memDir, "memory.events"), "oom_kill")
		} else {
			c.OOMKills = counter(filepath.Join(g.memDir, "memory.oom_control"), "oom_kill")
		}
	}
	if g.pidsDir != "" {
		c.ForkRefusals = counter(filepath.Join(g.pidsDir, "pids.events"), "max")
	}
	return c
}

// Remove kills whatever still runs in g and removes its directories.
func (g *Cgroup) Remove() error {
	if g == nil {
		return nil
	}
	var errs []error
	deadline := time.Now().Add(5 * time.Second)
	for _, dir := range g.dirs {
		errs = append(errs, removeCgroup(dir, deadline))
	}
	return errors.Join(errs...)
}

// Dirs are g's directories (one per hierarchy; none without cgroups).
func (g *Cgroup) Dirs() []string {
	if g == nil {
		return nil
	}
	return append([]string(nil), g.dirs...)
}

// removeCgroup SIGKILLs the processes in the cgroup dir until it can be
// removed, up to deadline.
func removeCgroup(dir string, deadline time.Time) error {
	_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0) // v2 ≥ 5.14; absent on v1
	for {
		for _, f := range strings.Fields(readString(filepath.Join(dir, "cgroup.procs"))) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		err := os.Remove(dir)
		if err == nil || os.IsNotExist(err) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("remove cgroup %s: %w", dir, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// counter returns the value of key in a flat-keyed cgroup file ("key N"
// lines), or 0.
func counter(path, key string) int64 {
	for _, line := range strings.Split(readString(path), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// readString returns the content of path, or "".
func readString(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
