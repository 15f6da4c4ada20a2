package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// systemPaths are shown read-only to every sandboxed agent when they exist
// (symbolic links, as /bin → usr/bin on merged-/usr systems, are recreated
// as links). Nothing else of the machine is visible unless the Spec says so.
var systemPaths = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/sys"}

// checkTimeout bounds Check's trial run of bwrap.
const checkTimeout = 10 * time.Second

// Bwrap confines a command with bubblewrap (https://github.com/containers/bubblewrap,
// Debian package "bubblewrap"). The process gets its own mount, PID, IPC,
// UTS and (where possible) cgroup namespaces, no capabilities, a new
// session (no terminal injection), and is killed, with everything it
// started, when bwrap's parent (the bridge) dies. It sees:
//
//   - the system directories read-only (/usr, /bin, /lib*, /sbin, /etc, /opt, /sys),
//     except /sys/fs/cgroup, where only Spec.Cgroup is shown (read-only),
//     a fresh /proc (its own processes only), a minimal /dev, a private
//     /tmp and /var/tmp;
//   - Spec.Dir and Spec.Private read-write, Spec.Home read-write when shared
//     (else an empty private directory), Spec.Binds as configured,
//     Spec.ReadOnly read-only;
//   - never Spec.Hide (empty read-only directory or empty file instead),
//     and Spec.Protect only read-only.
//
// With Spec.UnshareNet the process also gets its own network namespace
// (--unshare-net: loopback only); otherwise it shares the host's network.
type Bwrap struct {
	// Path is the bwrap executable; "" looks "bwrap" up in PATH.
	Path string
	// AppArmorSysctl is the file telling whether AppArmor restricts
	// unprivileged user namespaces (Ubuntu 23.10 and later); ""
	// means AppArmorUsernsSysctl. Check reads it only to explain a failure.
	AppArmorSysctl string
}

var _ Sandbox = (*Bwrap)(nil)

// Name implements Sandbox.
func (*Bwrap) Name() string { return NameBwrap }

// binary returns the bwrap executable's path.
func (b *Bwrap) binary() (string, error) {
	p := b.Path
	if p == "" {
		p = "bwrap"
	}
	path, err := exec.LookPath(p)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBwrapMissing, err)
	}
	return path, nil
}

// AppArmorUsernsSysctl is where Linux with AppArmor says whether
// unprivileged user namespaces are restricted to programs whose AppArmor
// profile allows them ("1"), as Ubuntu 24.04 does by default.
const AppArmorUsernsSysctl = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"

func (b *Bwrap) appArmorSysctl() string {
	if b.AppArmorSysctl != "" {
		return b.AppArmorSysctl
	}
	return AppArmorUsernsSysctl
}

// appArmorRestricts reports whether the AppArmor sysctl exists and is 1.
func (b *Bwrap) appArmorRestricts() bool {
	raw, err := os.ReadFile(b.appArmorSysctl())
	return err == nil && strings.TrimSpace(string(raw)) == "1"
}

// ErrBwrapMissing means bubblewrap is not installed (or not in PATH).
var ErrBwrapMissing = errors.New("bubblewrap (bwrap) is not installed: install the package \"bubblewrap\" " +
	"(Debian/Ubuntu: apt-get install bubblewrap), or set \"sandbox: none\" on the agent profile to run the agent " +
	"unconfined (see SECURITY.md)")

// Command implements Sandbox.
func (b *Bwrap) Command(spec Spec) (string, []string, error) {
	if err := spec.validate(); err != nil {
		return "", nil, err
	}
	path, err := b.binary()
	if err != nil {
		return "", nil, err
	}
	return path, bwrapArgs(spec, os.Lstat, os.Readlink), nil
}

// mount is one filesystem operation of the sandbox's view.
type mount struct {
	path string
	kind mountKind
}

// mountKind orders operations on the same path: later kinds win.
type mountKind int

const (
	mountTmpfs    mountKind = iota // an empty private directory (unshared home)
	mountRO                        // read-only bind
	mountRW                        // read-write bind
	mountProtect                   // read-only re-bind inside a writable area
	mountHideDir                   // empty read-only directory over a visible one
	mountHideFile                  // /dev/null over a visible file
	mountPrivate                   // the process's own writable directories
)

// bwrapArgs builds bwrap's arguments for spec. lstat and readlink read the
// host's filesystem (for system links and what Hide covers).
func bwrapArgs(spec Spec, lstat func(string) (os.FileInfo, error), readlink func(string) (string, error)) []string {
	args := []string{
		"--die-with-parent", "--new-session",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--cap-drop", "ALL",
	}
	if spec.UnshareNet {
		args = append(args, "--unshare-net")
	}
	system, visible := systemArgs(lstat, readlink)
	args = append(args, system...)
	args = append(args, cgroupArgs(spec.Cgroup, visible, lstat)...)
	args = append(args, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp")
	args = append(args, mountArgs(specMounts(spec, visible, lstat))...)
	args = append(args, "--chdir", spec.Dir, "--")
	return append(args, spec.Argv...)
}

// systemArgs shows the host's system paths read-only (their links as
// links) and the directory of /etc/resolv.conf's target; visible lists
// the roots of what the agent can see through them.
func systemArgs(lstat func(string) (os.FileInfo, error), readlink func(string) (string, error)) (args, visible []string) {
	for _, p := range systemPaths {
		fi, err := lstat(p)
		switch {
		case err != nil:
			continue
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := readlink(p); err == nil {
				args = append(args, "--symlink", target, p)
			}
		case fi.IsDir():
			args = append(args, "--ro-bind", p, p)
			visible = append(visible, p)
		}
	}
	// /etc/resolv.conf often links to /run (systemd-resolved): show its directory.
	if target, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && !underAny(target, visible) {
		d := filepath.Dir(target)
		args = append(args, "--ro-bind-try", d, d)
		visible = append(visible, d)
	}
	return args, visible
}

// cgroupArgs hide CgroupRoot when it is visible (an empty tmpfs over it,
// read-only) and show the agent's own cgroup directories views there:
// the cgroup figures of other agents, other bridges and the host stay
// unreadable.
func cgroupArgs(views []CgroupView, visible []string, lstat func(string) (os.FileInfo, error)) []string {
	if !underAny(CgroupRoot, visible) {
		return nil
	}
	if fi, err := lstat(CgroupRoot); err != nil || !fi.IsDir() {
		return nil
	}
	args := []string{"--tmpfs", CgroupRoot}
	for _, v := range views {
		at := filepath.Clean(v.At)
		if !within(at, CgroupRoot) {
			continue // validate refuses it; never bind outside
		}
		if at != CgroupRoot {
			args = append(args, "--dir", at)
		}
		args = append(args, "--ro-bind", filepath.Clean(v.Dir), at)
	}
	return append(args, "--remount-ro", CgroupRoot)
}

// specMounts lists spec's mounts (home, working directory, binds,
// read-only, protected and private paths, and what Hide covers of what
// is visible: the system's roots in visible and spec's binds), sorted in
// the order bwrap must make them.
func specMounts(spec Spec, visible []string, lstat func(string) (os.FileInfo, error)) []mount {
	var ms []mount
	add := func(kind mountKind, paths ...string) {
		for _, p := range paths {
			ms = append(ms, mount{filepath.Clean(p), kind})
		}
	}
	if spec.Home != "" {
		if spec.SharedHome {
			add(mountRW, spec.Home)
		} else {
			add(mountTmpfs, spec.Home)
		}
	}
	add(mountRW, spec.Dir)
	for _, bd := range spec.Binds {
		if bd.Writable {
			add(mountRW, bd.Path)
		} else {
			add(mountRO, bd.Path)
		}
	}
	add(mountRO, spec.ReadOnly...)
	add(mountProtect, spec.Protect...)
	add(mountPrivate, spec.Private...)
	for _, m := range ms {
		if m.kind == mountRO || m.kind == mountRW {
			visible = append(visible, m.path)
		}
	}
	for _, h := range spec.Hide {
		h = filepath.Clean(h)
		if !underAny(h, visible) {
			continue // not visible anyway
		}
		fi, err := lstat(h)
		if err != nil {
			continue // nothing there to hide
		}
		if fi.IsDir() {
			add(mountHideDir, h)
		} else {
			add(mountHideFile, h)
		}
	}
	// Shallow paths first, so a deeper mount is never covered by a
	// shallower one; on the same path the stronger kind goes last.
	slices.SortStableFunc(ms, func(a, b mount) int {
		if d := depth(a.path) - depth(b.path); d != 0 {
			return d
		}
		return int(a.kind) - int(b.kind)
	})
	return ms
}

// mountArgs gives bwrap's arguments for the sorted mounts ms.
func mountArgs(ms []mount) []string {
	var args, readonly []string
	for _, m := range ms {
		switch m.kind {
		case mountTmpfs:
			args = append(args, "--tmpfs", m.path)
		case mountRO, mountProtect:
			args = append(args, "--ro-bind", m.path, m.path)
		case mountRW, mountPrivate:
			args = append(args, "--bind", m.path, m.path)
		case mountHideDir:
			args = append(args, "--tmpfs", m.path)
			readonly = append(readonly, m.path)
		case mountHideFile:
			args = append(args, "--ro-bind", "/dev/null", m.path)
		}
	}
	// Hidden directories become read-only last: deeper mounts needed their
	// mount points created first.
	for _, p := range readonly {
		args = append(args, "--remount-ro", p)
	}
	return args
}

// depth is the number of path elements of a clean absolute path.
func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// underAny reports whether p lies within one of roots.
func underAny(p string, roots []string) bool {
	for _, r := range roots {
		if within(p, r) {
			return true
		}
	}
	return false
}

// Check implements Sandbox: bwrap must exist and be able to set up a
// sandbox like the agents' here (namespaces allowed for this user).
func (b *Bwrap) Check(ctx context.Context) error { return b.check(ctx, false) }

// CheckNetwork is Check for a sandbox with its own network namespace
// (Spec.UnshareNet).
func (b *Bwrap) CheckNetwork(ctx context.Context) error { return b.check(ctx, true) }

func (b *Bwrap) check(ctx context.Context, unshareNet bool) error {
	path, err := b.binary()
	if err != nil {
		return err
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		return fmt.Errorf("sandbox check: %w", err)
	}
	dir, err := os.MkdirTemp("", "agentbridge-sandbox-check-")
	if err != nil {
		return fmt.Errorf("sandbox check: %w", err)
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	args := bwrapArgs(Spec{Argv: []string{truePath}, Dir: dir, Hide: []string{dir}, UnshareNet: unshareNet}, os.Lstat, os.Readlink)
	cmd := exec.CommandContext(ctx, path, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		if b.appArmorRestricts() {
			return fmt.Errorf("bubblewrap cannot create a sandbox on this machine (%s): AppArmor restricts unprivileged user "+
				"namespaces here (%s is 1, as on Ubuntu 24.04). Either give bwrap an AppArmor profile that allows them "+
				"(a file /etc/apparmor.d/bwrap with \"profile bwrap /usr/bin/bwrap flags=(unconfined) { userns, }\", loaded "+
				"with \"apparmor_parser -r /etc/apparmor.d/bwrap\": only bwrap gains the right), or lift the restriction for "+
				"every program (sysctl kernel.apparmor_restrict_unprivileged_userns=0), or set \"sandbox: none\" on the "+
				"agent profile; see SECURITY.md", msg, b.appArmorSysctl())
		}
		return fmt.Errorf("bubblewrap cannot create a sandbox on this machine (%s): allow unprivileged user namespaces "+
			"(sysctl kernel.unprivileged_userns_clone=1 on Debian, or the container setting that blocks them; see SECURITY.md), "+
			"or set \"sandbox: none\" on the agent profile", msg)
	}
	return nil
}
