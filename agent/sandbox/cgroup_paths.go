package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
)

// CgroupName is the name of a bridge's group of agent cgroups, derived from
// its data directory: stable across restarts (so a run clears what the
// previous one left) and distinct for two bridges sharing a cgroup.
func CgroupName(dataDir string) string {
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	sum := sha256.Sum256([]byte(dataDir))
	return "agentbridge-" + hex.EncodeToString(sum[:6])
}

// cgroupMount is a mounted cgroup hierarchy (from /proc/self/mountinfo).
type cgroupMount struct {
	point       string   // where it is mounted
	root        string   // the cgroup shown at point
	v2          bool     // cgroup2
	controllers []string // v1: the controllers of the hierarchy
}

// parseCgroupMounts returns the cgroup and cgroup2 mounts in mountinfo.
// Line format: ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL…] - TYPE SOURCE SUPER_OPTIONS.
func parseCgroupMounts(mountinfo string) []cgroupMount {
	var out []cgroupMount
	for _, line := range strings.Split(mountinfo, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		m := cgroupMount{point: unescapeMount(f[4]), root: unescapeMount(f[3])}
		switch g[0] {
		case "cgroup2":
			m.v2 = true
		case "cgroup":
			for _, o := range strings.Split(g[2], ",") {
				if o != "rw" && o != "ro" && !strings.Contains(o, "=") {
					m.controllers = append(m.controllers, o)
				}
			}
		default:
			continue
		}
		out = append(out, m)
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space…).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1:i+4]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// isOctal reports whether s is three octal digits.
func isOctal(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return true
}

// ownCgroupDirs returns the directories of the process's own cgroups given
// /proc/self/cgroup and the cgroup mounts: the v2 one ("" when not
// mounted) and, by controller, the v1 ones. A cgroup outside what a mount
// shows (another namespace's path) is left out.
func ownCgroupDirs(procCgroup string, mounts []cgroupMount) (v2 string, v1 map[string]string) {
	v1 = map[string]string{}
	for _, line := range strings.Split(procCgroup, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || strings.Contains(parts[2], "/..") {
			continue
		}
		path := parts[2]
		if parts[0] == "0" && parts[1] == "" {
			for _, m := range mounts {
				if m.v2 {
					if d := mountedDir(m, path); d != "" {
						v2 = d
						break
					}
				}
			}
			continue
		}
		for _, ctrl := range strings.Split(parts[1], ",") {
			for _, m := range mounts {
				if !m.v2 && has(m.controllers, ctrl) {
					if d := mountedDir(m, path); d != "" {
						v1[ctrl] = d
						break
					}
				}
			}
		}
	}
	return v2, v1
}

// mountedDir is where cgroup path appears under mount m, or "".
func mountedDir(m cgroupMount, path string) string {
	root := strings.TrimSuffix(m.root, "/")
	switch {
	case root == "":
		return filepath.Join(m.point, path)
	case path == root:
		return m.point
	case strings.HasPrefix(path, root+"/"):
		return filepath.Join(m.point, strings.TrimPrefix(path, root))
	}
	return ""
}

// mountPoint is the point of the innermost mount holding dir, or "".
func mountPoint(dir string, mounts []cgroupMount) string {
	best := ""
	for _, m := range mounts {
		if within(dir, m.point) && len(m.point) > len(best) {
			best = m.point
		}
	}
	return best
}

// has reports whether list contains s.
func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
