package sandbox

import (
	"strings"
	"testing"
)

// TestBwrapCgroupArgs: /sys/fs/cgroup gets an empty tmpfs right after /sys
// is bound, the agent's own cgroups are bound read-only at their
// hierarchies' mount points inside it, and it is made read-only; nothing
// when /sys/fs/cgroup does not exist; a view outside /sys/fs/cgroup is
// refused by the spec's validation.
func TestBwrapCgroupArgs(t *testing.T) {
	lstat, readlink := fakeFS([]string{"/w", CgroupRoot}, nil)
	v1 := []CgroupView{
		{Dir: "/sys/fs/cgroup/memory/agentbridge-1/agent-7-2", At: "/sys/fs/cgroup/memory"},
		{Dir: "/sys/fs/cgroup/pids/agentbridge-1/agent-7-2", At: "/sys/fs/cgroup/pids"},
	}
	got := " " + strings.Join(bwrapArgs(Spec{Argv: []string{"/c"}, Dir: "/w", Cgroup: v1}, lstat, readlink), " ") + " "
	want := " --ro-bind /sys /sys --tmpfs /sys/fs/cgroup" +
		" --dir /sys/fs/cgroup/memory --ro-bind /sys/fs/cgroup/memory/agentbridge-1/agent-7-2 /sys/fs/cgroup/memory" +
		" --dir /sys/fs/cgroup/pids --ro-bind /sys/fs/cgroup/pids/agentbridge-1/agent-7-2 /sys/fs/cgroup/pids" +
		" --remount-ro /sys/fs/cgroup "
	if !strings.Contains(got, want) {
		t.Errorf("cgroup v1 views:\n%s\nwant the run\n%s", got, want)
	}
	v2 := []CgroupView{{Dir: "/sys/fs/cgroup/system.slice/b/agentbridge-1/agent-7-1", At: CgroupRoot}}
	got = " " + strings.Join(bwrapArgs(Spec{Argv: []string{"/c"}, Dir: "/w", Cgroup: v2}, lstat, readlink), " ") + " "
	if want := " --tmpfs /sys/fs/cgroup --ro-bind /sys/fs/cgroup/system.slice/b/agentbridge-1/agent-7-1 /sys/fs/cgroup --remount-ro /sys/fs/cgroup "; !strings.Contains(got, want) {
		t.Errorf("cgroup v2 view:\n%s\nwant the run\n%s", got, want)
	}
	got = " " + strings.Join(bwrapArgs(Spec{Argv: []string{"/c"}, Dir: "/w"}, lstat, readlink), " ") + " "
	if want := " --tmpfs /sys/fs/cgroup --remount-ro /sys/fs/cgroup "; !strings.Contains(got, want) {
		t.Errorf("no views: /sys/fs/cgroup not emptied:\n%s", got)
	}
	noCgroup, readlink2 := fakeFS([]string{"/w"}, nil)
	if got := strings.Join(bwrapArgs(Spec{Argv: []string{"/c"}, Dir: "/w", Cgroup: v1}, noCgroup, readlink2), " "); strings.Contains(got, CgroupRoot) {
		t.Errorf("no /sys/fs/cgroup on the host, yet: %s", got)
	}
	for _, bad := range []CgroupView{{Dir: "/sys/fs/cgroup/x", At: "/etc"}, {Dir: "rel", At: CgroupRoot}, {Dir: "/x", At: "/sys/fs/cgroupx"}} {
		if _, _, err := (&Bwrap{Path: "/bin/true"}).Command(Spec{Argv: []string{"/c"}, Dir: "/w", Cgroup: []CgroupView{bad}}); err == nil {
			t.Errorf("cgroup view %+v accepted", bad)
		}
	}
}
