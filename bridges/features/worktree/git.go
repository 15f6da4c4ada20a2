package worktree

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
)

// This file runs the bridge's git commands on a profile's repository and
// its agents' worktrees. All of that is agent-writable: a worktree is the
// agent's, and so are the objects, its admin directory and the
// agentbridge/ branches of the repository. Git runs programs named by the
// files it reads (filters, textconv, diff and merge drivers, hooks,
// fsmonitor, ssh commands, in the repository, in a sub-repository or
// submodule, in an included file...), so every git command of the bridge
// runs in the profile's sandbox (sandbox.RunHelper): with bwrap it sees
// only the paths of that one operation (read-only where it only reads),
// no data_dir but that worktree, no config file, no bridge HOME, no
// network, and a minimal environment. Whatever it starts runs there too.
// The bridge never falls back to an unconfined git: when the sandbox
// cannot run it, the operation fails and the worktree is kept.

// gitSafety are options of every git command the bridge runs, on top of
// the sandbox: no hooks, no fsmonitor, no transport (nothing fetches).
var gitSafety = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "protocol.allow=never"}

// worktreeGit runs git for one agent profile, confined by its sandbox.
// The zero value runs nothing (every run fails).
type worktreeGit struct {
	sb   sandbox.Sandbox
	hide []string // the bridge's secret paths: data_dir, the config file…
}

// gitView is what one git command sees: its working directory (read-only
// unless in write), the paths it reads and the paths it writes, and the
// environment that addresses the repository (GIT_DIR…).
type gitView struct {
	dir         string
	read, write []string
	env         []string
}

// newWorktreeGit returns the git runner of profile p: its sandbox from
// sandboxes, or, for a profile with sandbox "none", none — that agent
// already runs as the bridge's user, and git on its files runs so too. A
// profile with another sandbox that is missing from sandboxes is an error.
func newWorktreeGit(cfg *config.Config, sandboxes map[string]sandbox.Sandbox, p *profile.Agent) (worktreeGit, error) {
	sb := sandboxes[p.Name]
	if sb == nil {
		if p.Sandbox != "" && p.Sandbox != profile.SandboxNone {
			return worktreeGit{}, fmt.Errorf("worktree git of profile %q: no %s sandbox to run it in", p.Name, p.Sandbox)
		}
		sb = sandbox.None{}
	}
	return worktreeGit{sb: sb, hide: agents.SecretPaths(cfg)}, nil
}

// run runs git with args (after gitSafety) in the sandbox with view v and
// returns its standard output. A failure carries git's own message; an
// exit status is an *exec.ExitError.
func (g worktreeGit) run(ctx context.Context, v gitView, args ...string) (string, error) {
	if g.sb == nil {
		return "", fmt.Errorf("git %s: no sandbox to run it in", strings.Join(args, " "))
	}
	bin, err := gitBinary()
	if err != nil {
		return "", err
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0",
		"GIT_CONFIG_GLOBAL=/dev/null"}
	out, err := sandbox.RunHelper(ctx, g.sb, sandbox.Helper{
		Argv: append(append([]string{bin}, gitSafety...), args...),
		Dir:  v.dir, Read: v.read, Write: v.write, Hide: g.hide,
		Env: append(env, v.env...),
	})
	if err != nil {
		return "", fmt.Errorf("git %s (in the %s sandbox): %w", strings.Join(args, " "), g.sb.Name(), err)
	}
	return string(out), nil
}

// gitBinary is git's absolute path with links followed (the sandbox shows
// its directory).
func gitBinary() (string, error) {
	p, err := exec.LookPath("git")
	if err != nil {
		return "", fmt.Errorf("git is required for worktrees: %w", err)
	}
	if p, err = filepath.Abs(p); err != nil {
		return "", fmt.Errorf("git: %w", err)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p, nil
}
