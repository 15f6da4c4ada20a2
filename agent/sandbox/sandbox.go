// Package sandbox confines an agent process: it turns a command line into
// one that runs the command with a restricted view of the machine.
//
// The agent (the Claude Code CLI and everything it starts) is untrusted: it
// runs commands people approve quickly and reads text anyone can write. A
// Sandbox decides what it sees. Implementations:
//
//   - Bwrap (Linux, bubblewrap): own mount, PID, IPC and UTS namespaces, no
//     capabilities, the system read-only, the workdir and the session's
//     private state read-write, a private /tmp, nothing of the bridge
//     (data_dir, the config file, the bridge's HOME and processes). Every
//     process of the sandbox dies with it and with the bridge.
//   - None: the command runs as is (the agent sees what the bridge's Unix
//     user sees). For machines without bubblewrap, or when a container is
//     the boundary.
//
// A container runtime or another operating system's sandbox fits behind the
// same interface: it receives the same Spec.
package sandbox

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// Names accepted by New (the config's agents.*.sandbox).
const (
	NameBwrap = "bwrap"
	NameNone  = "none"
)

// Sandbox wraps a command so that it runs confined. Implementations are
// safe for concurrent use and keep no per-process state: everything a
// wrapped process needs is in its command line.
type Sandbox interface {
	// Name is the config name of the sandbox ("bwrap", "none").
	Name() string
	// Command returns the program and arguments that run spec.Argv
	// confined by spec. It does not start anything. It fails when spec
	// is incomplete (e.g. a relative path).
	Command(spec Spec) (path string, args []string, err error)
	// Check verifies that the sandbox works on this machine (for bwrap:
	// the binary exists and may create namespaces), so that a broken
	// setup is a clear error at startup rather than at the first message.
	Check(ctx context.Context) error
}

// Bind is an extra path the agent may see, at the same place as outside.
type Bind struct {
	Path     string // absolute
	Writable bool   // false = read-only
}

// Spec is what one agent process may see and run. All paths are absolute
// and appear inside at the same place as outside, so paths in logs and tool
// output mean the same thing on both sides.
type Spec struct {
	// Argv is the command and its arguments; Argv[0] is an absolute path
	// (resolve symbolic links first: only its directory is made visible).
	Argv []string
	// Dir is the working directory (the profile's workdir), writable.
	Dir string
	// Home is HOME as the agent sees it. With SharedHome it is the
	// profile's home, writable and shared by the profile's conversations;
	// otherwise an empty private directory replaces it, so the bridge's own
	// HOME stays out of sight.
	Home       string
	SharedHome bool
	// Private are directories only this process uses, writable: the
	// session's state (the CLI's config dir) and its TMPDIR.
	Private []string
	// ReadOnly are extra paths visible read-only, e.g. the directory of
	// the CLI's executable when it lives outside the system directories.
	ReadOnly []string
	// Binds are the profile's sandbox_binds.
	Binds []Bind
	// Protect are paths inside writable areas that stay read-only (the
	// workdir's .claude directory: permission settings are the bridge's).
	// Each must exist.
	Protect []string
	// Hide are paths never visible, even inside a visible directory: the
	// bridge's data_dir and its config file. Private paths inside a hidden
	// directory are still visible (the session's own state).
	Hide []string
	// UnshareNet gives the process its own network namespace with only a
	// loopback interface: no route anywhere, and the host's loopback
	// services out of reach (see package egress for the way out). A
	// sandbox that cannot do this refuses the spec.
	UnshareNet bool
	// Cgroup are the agent's own cgroup directories, shown read-only where
	// it looks for them. Nothing else of /sys/fs/cgroup is visible (other
	// agents' and other bridges' figures stay out of sight); without
	// Cgroup it is empty.
	Cgroup []CgroupView
}

// CgroupRoot is where cgroup hierarchies are mounted; the sandbox hides
// it, showing only Spec.Cgroup.
const CgroupRoot = "/sys/fs/cgroup"

// CgroupView shows one of the agent's own cgroup directories, Dir on the
// host, read-only at At inside the sandbox: the mount point of Dir's
// hierarchy (CgroupRoot itself on cgroup v2, CgroupRoot/memory and so on
// on v1), where a process rooted at Dir by its cgroup namespace (its
// /proc/self/cgroup says "/") reads its own limits. At must be CgroupRoot
// or below it.
type CgroupView struct {
	Dir, At string
}

// validate checks that every path in spec is absolute and Argv is set.
func (s Spec) validate() error {
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		return fmt.Errorf("sandbox: no command")
	}
	check := func(what, p string) error {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("sandbox: %s %q is not an absolute path", what, p)
		}
		return nil
	}
	if err := check("command", s.Argv[0]); err != nil {
		return err
	}
	if err := check("workdir", s.Dir); err != nil {
		return err
	}
	if s.Home != "" {
		if err := check("home", s.Home); err != nil {
			return err
		}
	}
	for _, lists := range []struct {
		what  string
		paths []string
	}{{"private path", s.Private}, {"read-only path", s.ReadOnly}, {"protected path", s.Protect}, {"hidden path", s.Hide}} {
		for _, p := range lists.paths {
			if err := check(lists.what, p); err != nil {
				return err
			}
		}
	}
	for _, b := range s.Binds {
		if err := check("sandbox bind", b.Path); err != nil {
			return err
		}
	}
	for _, v := range s.Cgroup {
		if err := check("cgroup", v.Dir); err != nil {
			return err
		}
		if !filepath.IsAbs(v.At) || !within(filepath.Clean(v.At), CgroupRoot) {
			return fmt.Errorf("sandbox: cgroup view %q is not below %s", v.At, CgroupRoot)
		}
	}
	return nil
}

// New returns the sandbox named name (NameBwrap or NameNone). bwrapPath is
// the bubblewrap executable ("" = "bwrap", looked up in PATH when used).
func New(name, bwrapPath string) (Sandbox, error) {
	switch name {
	case NameBwrap:
		return &Bwrap{Path: bwrapPath}, nil
	case NameNone:
		return None{}, nil
	default:
		return nil, fmt.Errorf("sandbox: unknown sandbox %q (want %s or %s)", name, NameBwrap, NameNone)
	}
}

// None runs the command unconfined. The agent sees what the bridge's Unix
// user sees; the bridge still gives it a minimal environment, its own
// process group and a parent-death signal (see the agent package).
type None struct{}

// Name implements Sandbox.
func (None) Name() string { return NameNone }

// Command implements Sandbox: the command itself.
func (None) Command(spec Spec) (string, []string, error) {
	if err := spec.validate(); err != nil {
		return "", nil, err
	}
	if spec.UnshareNet {
		return "", nil, fmt.Errorf("sandbox: %s cannot give the agent its own network (use bwrap)", NameNone)
	}
	return spec.Argv[0], append([]string(nil), spec.Argv[1:]...), nil
}

// Check implements Sandbox: nothing to check.
func (None) Check(context.Context) error { return nil }

// within reports whether path p is dir or lies below it (both clean and
// absolute).
func within(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}
