package sandbox

import (
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

// This file runs the bridge's own helper commands on files an agent could
// have written (git on an agent's worktree). Such a command reads input
// the agent controls, and input can make a program run other programs
// (git runs filters, drivers and hooks named in the repository's config),
// so it gets the agent's confinement, never the bridge's view: with Bwrap
// it sees the system read-only, the paths it is given and nothing else —
// no data_dir but what it is given, no config file, no bridge HOME, no
// network — and runs with the environment it is given, nothing of the
// bridge's. With None it runs as the bridge's user, like the agent itself.

// Helper limits: what a helper prints beyond its limit is dropped and
// fails the run, and a helper whose context ended has this long to let go
// of its output before Run returns.
const (
	helperOutputLimit = 16 << 20
	helperErrorLimit  = 4 << 10
	helperWaitDelay   = 5 * time.Second
)

// Helper is one short command of the bridge run on agent-written files.
// All paths are absolute; they appear inside at the same place as outside.
type Helper struct {
	// Argv is the command; Argv[0] is an absolute path whose directory
	// is shown read-only.
	Argv []string
	// Dir is the working directory, read-only unless it is in Write.
	Dir string
	// Read are shown read-only, Write read-write. Neither may reach a
	// Hide path through a symbolic link.
	Read, Write []string
	// Hide are never shown, even inside Read or Write: the bridge's
	// data_dir and config file (a path given in Read or Write inside a
	// hidden directory is shown all the same).
	Hide []string
	// Env is the whole environment, to which RunHelper adds HOME and
	// TMPDIR: an empty private directory.
	Env []string
}

// RunHelper runs h confined by sb and returns its standard output. With
// Bwrap the helper gets its own network namespace with no interface but
// loopback; with None it runs unconfined (as the agent does there). Any
// other Sandbox is refused: a helper never runs less confined than asked.
// A failure carries the helper's standard error; an exit status is an
// *exec.ExitError (errors.As). RunHelper may block until ctx ends.
func RunHelper(ctx context.Context, sb Sandbox, h Helper) ([]byte, error) {
	if sb == nil {
		return nil, errors.New("helper: no sandbox")
	}
	if err := checkHelper(h); err != nil {
		return nil, err
	}
	home, err := os.MkdirTemp("", "agentbridge-helper-")
	if err != nil {
		return nil, fmt.Errorf("helper: %w", err)
	}
	defer os.RemoveAll(home)
	path, args, err := helperCommand(sb, h, home)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = h.Dir
	cmd.Env = append(slices.Clone(h.Env), "HOME="+home, "TMPDIR="+home)
	cmd.WaitDelay = helperWaitDelay
	stdout, stderr := &capped{limit: helperOutputLimit}, &capped{limit: helperErrorLimit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	msg := strings.TrimSpace(string(stderr.buf))
	switch {
	case err != nil && msg != "":
		return nil, fmt.Errorf("%w: %s", err, msg)
	case err != nil:
		return nil, err
	case stdout.over:
		return nil, fmt.Errorf("helper printed more than %d bytes", helperOutputLimit)
	}
	return stdout.buf, nil
}

// helperCommand is the program and arguments that run h confined by sb,
// with home as its empty HOME.
func helperCommand(sb Sandbox, h Helper, home string) (string, []string, error) {
	spec := Spec{
		Argv:     h.Argv,
		Dir:      h.Dir,
		Home:     home, // not shared: an empty private directory inside
		ReadOnly: []string{filepath.Dir(resolve(h.Argv[0]))},
		Hide:     h.Hide,
	}
	for _, p := range h.Read {
		spec.Binds = append(spec.Binds, Bind{Path: p})
	}
	for _, p := range h.Write {
		spec.Binds = append(spec.Binds, Bind{Path: p, Writable: true})
	}
	if !slices.Contains(h.Write, h.Dir) {
		spec.Protect = []string{h.Dir}
	}
	switch s := sb.(type) {
	case *Bwrap:
		path, args, err := s.Command(spec)
		if err != nil {
			return "", nil, fmt.Errorf("helper: %w", err)
		}
		return path, append([]string{"--unshare-net"}, args...), nil
	case None:
		return s.Command(spec)
	default:
		return "", nil, fmt.Errorf("helper: sandbox %s cannot confine a helper", sb.Name())
	}
}

// checkHelper checks that h's paths are absolute and that no path it
// shows leads, through a symbolic link, into or around a hidden path:
// bubblewrap follows links when it binds, and would show what the link
// points to where the hidden path is not covered.
func checkHelper(h Helper) error {
	if len(h.Argv) == 0 || !filepath.IsAbs(h.Argv[0]) || !filepath.IsAbs(h.Dir) {
		return fmt.Errorf("helper: an absolute command and working directory are required")
	}
	for _, p := range slices.Concat([]string{h.Dir}, h.Read, h.Write) {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("helper: %q is not an absolute path", p)
		}
		rp := resolve(p)
		for _, hd := range h.Hide {
			ch, rh := filepath.Clean(hd), resolve(hd)
			cp := filepath.Clean(p)
			if within(rp, rh) != within(cp, ch) || within(rh, rp) != within(ch, cp) {
				return fmt.Errorf("helper: %s leads to or around the hidden %s through a symbolic link", p, hd)
			}
		}
	}
	return nil
}

// resolve is p with symbolic links followed, or p cleaned when it cannot
// be resolved (it does not exist).
func resolve(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// capped keeps the first limit bytes written to it and drops the rest,
// never failing a write (a failing write would leave the helper blocked on
// a full pipe).
type capped struct {
	buf   []byte
	limit int
	over  bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.limit - len(c.buf); room < len(p) {
		c.buf = append(c.buf, p[:max(room, 0)]...)
		c.over = true
	} else {
		c.buf = append(c.buf, p...)
	}
	return len(p), nil
}
