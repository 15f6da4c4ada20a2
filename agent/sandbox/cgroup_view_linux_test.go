//go:build linux

package sandbox

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestSandboxSeesOnlyItsOwnCgroup: a command sandboxed by bwrap inside an
// agent cgroup reads its own limits where its cgroup namespace roots it
// (the hierarchy's mount point), but cannot read a sibling agent's figures
// (memory, processes, CPU) by their host paths, find the sibling's or the
// bridge's group by name anywhere under /sys/fs, or see any hierarchy it
// has no view of.
func TestSandboxSeesOnlyItsOwnCgroup(t *testing.T) {
	b := usableBwrap(t)
	sh := shell(t)
	c := needCgroups(t)
	lim := Limits{Memory: 300 << 20, Processes: 64, CPU: 0.5}
	own, err := c.New(lim)
	if err != nil || own == nil {
		t.Fatalf("New: %v, %v", own, err)
	}
	defer own.Remove()
	sibling, err := c.New(lim)
	if err != nil || sibling == nil {
		t.Fatalf("New: %v, %v", sibling, err)
	}
	defer sibling.Remove()
	if len(own.Views()) == 0 {
		t.Fatalf("no cgroup views for %v (mount points %v)", own.Dirs(), c.points)
	}

	// The sibling's figures, by their host paths, as the attack read them.
	var figures []string
	for _, d := range sibling.Dirs() {
		for _, f := range []string{"memory.usage_in_bytes", "memory.current", "memory.stat", "pids.current", "cpu.stat",
			"cpuacct.usage", "cpu.shares", "cpu.weight", "cgroup.procs"} {
			if _, err := exec.Command("test", "-r", filepath.Join(d, f)).Output(); err == nil {
				figures = append(figures, filepath.Join(d, f))
			}
		}
	}
	if len(figures) < 3 {
		t.Fatalf("the host shows too few figures of the sibling to test with: %v", figures)
	}
	ownLimit := "/sys/fs/cgroup/memory/memory.limit_in_bytes"
	if c.Version() == 2 {
		ownLimit = "/sys/fs/cgroup/memory.max"
	}
	groupName := filepath.Base(filepath.Dir(sibling.Dirs()[0])) // this bridge's group, holding every agent of it
	script := `
echo "own_limit=$(cat ` + ownLimit + ` 2>/dev/null)"
for f in "$@"; do if cat "$f" >/dev/null 2>&1; then echo "read=$f"; fi; done
find /sys/fs -name '` + filepath.Base(sibling.Dirs()[0]) + `' 2>/dev/null | sed 's/^/found=/'
find /sys/fs -name '` + groupName + `' 2>/dev/null | sed 's/^/found=/'
echo "listing=$(ls /sys/fs/cgroup | tr '\n' ,)"
if touch /sys/fs/cgroup/x 2>/dev/null; then echo wrote=tmpfs; fi
`
	path, args, err := b.Command(Spec{
		Argv: append([]string{sh, "-c", script, "probe"}, figures...),
		Dir:  t.TempDir(), Cgroup: own.Views(),
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	placed, err := own.Place(cmd)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	placed()
	if err != nil {
		t.Fatalf("sandboxed probe: %v\n%s", err, out)
	}
	got := string(out)
	t.Logf("probe:\n%s", got)
	if !strings.Contains(got, "own_limit="+strconv.FormatInt(lim.Memory, 10)+"\n") {
		t.Errorf("the sandboxed command cannot read its own memory limit at %s", ownLimit)
	}
	for _, bad := range []string{"read=", "found=", "wrote="} {
		if strings.Contains(got, bad) {
			t.Errorf("the sandboxed command sees what it must not (%s…)", bad)
		}
	}
	var wantList []string
	for _, v := range own.Views() {
		if v.At == CgroupRoot {
			wantList = nil // v2: the leaf itself is the root
			break
		}
		wantList = append(wantList, filepath.Base(v.At))
	}
	if wantList != nil && !strings.Contains(got, "listing="+strings.Join(slices.Sorted(slices.Values(wantList)), ",")+",\n") {
		t.Errorf("/sys/fs/cgroup shows more (or less) than the agent's own hierarchies %v", wantList)
	}
}
