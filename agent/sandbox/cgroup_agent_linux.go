//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

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
	name := fmt.Sprintf("agent-%d-%d", os.Getpid(), c.seq.Add(1)) // unique across restarts
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
			if at := c.points[group]; at != "" && within(at, CgroupRoot) {
				g.views = append(g.views, CgroupView{Dir: dir, At: at})
			}
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
	views     []CgroupView  // dirs as the agent sees them (Views)
	memDir    string        // where the memory counters are ("" = no memory limit)
	pidsDir   string        // where the pids counters are ("" = no process limit)
	cpuDir    string        // where the CPU share is ("" = none)
	cpu       atomic.Uint64 // math.Float64bits of the CPU share set last
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
	case lim == LimitCPU:
		g.cpuDir = dir
		g.cpu.Store(math.Float64bits(l.CPU))
		name, value := g.cpuFile(l.CPU)
		files = []file{{name, value, false}}
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

// cpuFile is the file and value of a CPU share of cores in g's hierarchy.
func (g *Cgroup) cpuFile(cores float64) (name, value string) {
	if g.version == 2 {
		return "cpu.weight", strconv.Itoa(cpuWeight(cores))
	}
	return "cpu.shares", strconv.Itoa(cpuShares(cores))
}

// SetCPU changes g's share of the CPU when the machine is busy to cores.
// It does nothing (nil) when g has no CPU share (no cgroup, or no CPU
// controller).
func (g *Cgroup) SetCPU(cores float64) error {
	if g == nil || g.cpuDir == "" {
		return nil
	}
	name, value := g.cpuFile(cores)
	p := filepath.Join(g.cpuDir, name)
	if err := os.WriteFile(p, []byte(value), 0); err != nil {
		return fmt.Errorf("set %s of agent cgroup: %w", p, err)
	}
	g.cpu.Store(math.Float64bits(cores))
	return nil
}

// CPU is g's share of the CPU in cores as set last (0 = none).
func (g *Cgroup) CPU() float64 {
	if g == nil || g.cpuDir == "" {
		return 0
	}
	return math.Float64frombits(g.cpu.Load())
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

// Views are g's directories as a sandbox shows them to the process it
// holds (Spec.Cgroup): each at the mount point of its hierarchy, where the
// process's cgroup namespace roots it. Empty without cgroups.
func (g *Cgroup) Views() []CgroupView {
	if g == nil {
		return nil
	}
	return append([]CgroupView(nil), g.views...)
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
