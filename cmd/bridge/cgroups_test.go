package main

import (
	"os"
	"path/filepath"
	"time"

	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/internal/tmproot"
)

// agentCgroupDirs lists the bridge's group directories (cgroup v1 memory,
// pids and cpu hierarchies, or v2) for the data dir under dir.
func agentCgroupDirs(dir string) []string {
	name := sandbox.CgroupName(filepath.Join(dir, "data"))
	var out []string
	_ = filepath.WalkDir("/sys/fs/cgroup", func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if d.Name() == name {
			out = append(out, p)
			return filepath.SkipDir
		}
		return nil
	})
	return out
}

// removeAgentLeftovers removes the (empty) agent cgroups and group
// directories and the agents' temporary root a bridge on dir left, as its
// next start would: tests that SIGKILL a bridge never start it again on
// that directory.
func removeAgentLeftovers(dir string) {
	removeAgentTemp(dir)
	deadline := time.Now().Add(5 * time.Second) // the killed agents may still be exiting
	for _, g := range agentCgroupDirs(dir) {
		m, _ := filepath.Glob(filepath.Join(g, "agent-*"))
		for _, d := range append(m, g) {
			for err := os.Remove(d); err != nil && !os.IsNotExist(err) && time.Now().Before(deadline); err = os.Remove(d) {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
}

// removeAgentTemp removes the agents' temporary root a killed bridge
// recorded in its data_dir (dir or a directory in it): no bridge starts on
// that data_dir again to do it.
func removeAgentTemp(dir string) {
	records, _ := filepath.Glob(filepath.Join(dir, tmproot.RecordName))
	deeper, _ := filepath.Glob(filepath.Join(dir, "*", tmproot.RecordName))
	for _, r := range append(records, deeper...) {
		tmproot.Sweep(filepath.Dir(r), nil)
	}
}
