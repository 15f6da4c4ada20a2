package sandbox

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// allowedSystemSources are the host directories every agent may see read-only. This list is kept here on
// purpose, apart from systemPaths: widening what the sandbox shows must be a deliberate change of both.
var allowedSystemSources = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/sys"}

// bindFlags are bwrap's options that make a host path visible; each takes a source and a destination.
var bindFlags = []string{"--bind", "--bind-try", "--ro-bind", "--ro-bind-try", "--dev-bind", "--dev-bind-try"}

// cgroupViews are agent cgroups as Cgroup.Views gives them (v2, v1).
var cgroupViews = []CgroupView{
	{Dir: "/sys/fs/cgroup/system.slice/bridge/agentbridge-1/agent-7-1", At: "/sys/fs/cgroup"},
	{Dir: "/sys/fs/cgroup/memory/agentbridge-1/agent-7-2", At: "/sys/fs/cgroup/memory"},
	{Dir: "/sys/fs/cgroup/pids/agentbridge-1/agent-7-2", At: "/sys/fs/cgroup/pids"},
}

// TestBwrapBindSourcesProperty builds the arguments for many random specs on a host where every path
// exists (so any system path added to the list shows up) and checks every bind: its source must be an
// allowed system directory, the resolver's directory, one of the Spec's own paths (bound to itself),
// one of its own cgroups read-only at its hierarchy's mount point, or /dev/null over a hidden path.
// Anything else, such as /root or /home, fails. /sys/fs/cgroup is always covered by an empty tmpfs
// before any cgroup view.
func TestBwrapBindSourcesProperty(t *testing.T) {
	pool := []string{
		"/srv/work", "/srv/work/sub", "/srv/work/.claude", "/srv/cfg", "/srv/cfg/data", "/srv/cfg/data/sessions/s1",
		"/srv/cfg/bridge.yaml", "/home/bridge", "/home/bridge/.config", "/root/.ssh", "/var/lib/agent",
		"/opt/tools", "/tmp/t", "/mnt/shared",
	}
	files := []string{"/srv/cfg/bridge.yaml"}
	links := map[string]string{"/bin": "usr/bin", "/lib": "usr/lib", "/lib64": "usr/lib64", "/sbin": "usr/sbin"}
	lstat := func(p string) (os.FileInfo, error) {
		if _, ok := links[p]; ok {
			return fakeInfo{p, fs.ModeSymlink}, nil
		}
		if slices.Contains(files, p) {
			return fakeInfo{p, 0}, nil
		}
		return fakeInfo{p, fs.ModeDir}, nil // everything else exists, as on a full host
	}
	readlink := func(p string) (string, error) {
		if target, ok := links[p]; ok {
			return target, nil
		}
		return "", fs.ErrInvalid
	}
	var resolvDir string // bwrapArgs shows the directory of /etc/resolv.conf's target (e.g. /run/systemd/resolve)
	if target, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil {
		if d := filepath.Dir(target); d == "/etc" || strings.HasPrefix(d, "/run/") {
			resolvDir = d
		}
	}

	rng := rand.New(rand.NewPCG(28, 1))
	pick := func(max int) []string {
		var out []string
		for range rng.IntN(max + 1) {
			out = append(out, pool[rng.IntN(len(pool))])
		}
		return out
	}
	for i := range 2000 {
		spec := Spec{
			Argv: []string{"/opt/tools/claude", "-p"}, Dir: pool[rng.IntN(len(pool))],
			Private: pick(2), ReadOnly: pick(2), Protect: pick(1), Hide: pick(3),
			SharedHome: rng.IntN(2) == 0, UnshareNet: rng.IntN(2) == 0,
		}
		if rng.IntN(3) > 0 {
			spec.Home = pool[rng.IntN(len(pool))]
		}
		for _, p := range pick(2) {
			spec.Binds = append(spec.Binds, Bind{Path: p, Writable: rng.IntN(2) == 0})
		}
		for range rng.IntN(3) {
			spec.Cgroup = append(spec.Cgroup, cgroupViews[rng.IntN(len(cgroupViews))])
		}
		own := []string{spec.Dir}
		own = append(own, spec.Private...)
		own = append(own, spec.ReadOnly...)
		own = append(own, spec.Protect...)
		for _, b := range spec.Binds {
			own = append(own, b.Path)
		}
		if spec.SharedHome && spec.Home != "" {
			own = append(own, spec.Home)
		}

		args := bwrapArgs(spec, lstat, readlink)
		if k := slices.Index(args, CgroupRoot); k < 1 || args[k-1] != "--tmpfs" || k < slices.Index(args, "/sys") {
			t.Fatalf("spec %d: %s is not covered by a tmpfs after /sys is bound: %q", i, CgroupRoot, args)
		}
		for j := 0; j < len(args) && args[j] != "--"; j++ {
			if !slices.Contains(bindFlags, args[j]) {
				continue
			}
			if j+2 >= len(args) {
				t.Fatalf("spec %d: %s without source and destination: %q", i, args[j], args)
			}
			src, dst := args[j+1], args[j+2]
			j += 2
			switch {
			case src == "/dev/null" && args[j-2] == "--ro-bind" && slices.Contains(spec.Hide, dst):
			case args[j-2] == "--ro-bind" && slices.Contains(spec.Cgroup, CgroupView{Dir: src, At: dst}):
			case src != dst:
				t.Fatalf("spec %d: %s %s %s maps a host path elsewhere\nspec: %+v", i, args[j-2], src, dst, spec)
			case slices.Contains(allowedSystemSources, src), src == resolvDir && src != "",
				slices.Contains(own, src):
			default:
				t.Fatalf("spec %d: %s %s %s: the source is neither a system directory nor one of the spec's paths\nspec: %+v",
					i, args[j-2], src, dst, spec)
			}
		}
	}
}
