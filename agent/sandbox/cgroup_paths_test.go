package sandbox

import "testing"

// TestOwnCgroupDirs: the bridge's own cgroup directories are found on a v1
// hybrid host (this project's machines), a v2 host, and in a container
// whose mounts show only its part of the tree.
func TestOwnCgroupDirs(t *testing.T) {
	hybridMounts := `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw`
	hybridSelf := "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/dbc4\n1:cpu:/\n0::/\n"
	v2, v1 := ownCgroupDirs(hybridSelf, parseCgroupMounts(hybridMounts))
	if v2 != "/sys/fs/cgroup/unified" || v1["memory"] != "/sys/fs/cgroup/memory/process_api/dbc4" ||
		v1["pids"] != "/sys/fs/cgroup/pids" || v1["cpu"] != "/sys/fs/cgroup/cpu" {
		t.Errorf("hybrid: v2 %q, v1 %v", v2, v1)
	}

	v2Mounts := `25 20 0:22 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate`
	v2, v1 = ownCgroupDirs("0::/system.slice/agentbridge.service\n", parseCgroupMounts(v2Mounts))
	if v2 != "/sys/fs/cgroup/system.slice/agentbridge.service" || len(v1) != 0 {
		t.Errorf("v2: v2 %q, v1 %v", v2, v1)
	}

	// A v1 container without a cgroup namespace: the mount shows its own
	// cgroup as the root.
	ctrMounts := `700 690 0:32 /docker/abc /sys/fs/cgroup/memory ro,nosuid - cgroup cgroup rw,memory
701 690 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro,nosuid - cgroup cgroup rw,cpu,cpuacct`
	_, v1 = ownCgroupDirs("4:memory:/docker/abc\n2:cpu,cpuacct:/docker/abc/sub\n3:pids:/other\n", parseCgroupMounts(ctrMounts))
	if v1["memory"] != "/sys/fs/cgroup/memory" || v1["cpu"] != "/sys/fs/cgroup/cpu,cpuacct/sub" || v1["pids"] != "" {
		t.Errorf("container: v1 %v", v1)
	}
	if got := unescapeMount(`/mnt/a\040b`); got != "/mnt/a b" {
		t.Errorf("unescape: %q", got)
	}
}

// TestLimitsText: the words !status and the start-up log use.
func TestLimitsText(t *testing.T) {
	l := Limits{Memory: 4 << 30, Processes: 512, CPU: 1}
	e := Enforcement{Mechanism: "cgroup v1", Enforced: []string{LimitMemory, LimitProcesses}, Missing: []string{LimitCPU}, Why: "no cpu hierarchy"}
	want := "memory 4 GiB, 512 processes (cgroup v1); ⚠️ not enforced: CPU 1 (no cpu hierarchy)"
	if got := e.Summary(l); got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	for n, want := range map[int64]string{512 << 20: "512 MiB", 1536 << 20: "1.5 GiB", 100: "100 B"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
	if cpuShares(0.5) != 512 || cpuWeight(2) != 200 || cpuWeight(0.001) != 1 {
		t.Errorf("cpu: shares(0.5)=%d weight(2)=%d weight(0.001)=%d", cpuShares(0.5), cpuWeight(2), cpuWeight(0.001))
	}
}
