//go:build linux

package agent

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// TreeRSS returns the resident memory in bytes of the process pid and all
// its descendants (an agent's sandbox, the CLI and the tools it runs),
// read from /proc. A process that exits while it is read is skipped; a pid
// that does not exist is an error.
func TreeRSS(pid int) (int64, error) {
	if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); err != nil {
		return 0, fmt.Errorf("process %d: %w", pid, err)
	}
	dirs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return 0, fmt.Errorf("list processes: %w", err)
	}
	children := map[int][]int{}
	rss := map[int]int64{}
	page := int64(os.Getpagesize())
	for _, stat := range dirs {
		p, parent, pages, ok := readStat(stat)
		if !ok {
			continue
		}
		children[parent] = append(children[parent], p)
		rss[p] = pages * page
	}
	var total int64
	for todo := []int{pid}; len(todo) > 0; {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		total += rss[p]
		todo = append(todo, children[p]...)
	}
	return total, nil
}

// readStat parses pid, ppid and rss (pages) from a /proc/PID/stat file.
// The command name (field 2) may hold spaces and parentheses, so fields are
// counted from the last ')'.
func readStat(path string) (pid, ppid int, rssPages int64, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, 0, false
	}
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return 0, 0, 0, false
	}
	pid, err = strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return 0, 0, 0, false
	}
	f := bytes.Fields(b[end+1:])
	// f[0] is field 3 (state): ppid is field 4, rss field 24.
	if len(f) < 22 {
		return 0, 0, 0, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pages, err2 := strconv.ParseInt(string(f[21]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, 0, false
	}
	return pid, ppid, pages, true
}
