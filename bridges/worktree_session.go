package bridges

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/pool"
	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// worktreeTimeout bounds the git commands of one worktree operation.
const worktreeTimeout = 2 * time.Minute

// worktreePool wraps the agent pool: before a session of a profile with
// worktree: true starts, it makes (or finds) the session's worktree and
// points the spawn at it. Acquire runs off the conversation's worker, so
// git's time does not hold the conversation up.
type worktreePool struct {
	AgentPool
	cfg       *config.Config
	sandboxes map[string]sandbox.Sandbox // by profile: where the bridge's git runs (worktree_git.go)
	log       *slog.Logger
}

// withWorktrees returns pool wrapped by worktreePool when a profile of cfg
// uses worktrees, else pool itself. sandboxes are the profiles' sandboxes
// (CoreOptions.Sandboxes).
func withWorktrees(pool AgentPool, cfg *config.Config, sandboxes map[string]sandbox.Sandbox, log *slog.Logger) AgentPool {
	if pool == nil || cfg == nil {
		return pool
	}
	wrap := false
	for _, name := range slices.Sorted(maps.Keys(cfg.Agents)) {
		a := cfg.Agents[name]
		if !a.Worktree {
			continue
		}
		wrap = true
		if a.Sandbox == config.SandboxNone && log != nil {
			log.Warn("agent profile with worktree: true runs without a sandbox: the bridge's git on its worktrees runs unconfined too, "+
				"as the bridge's user, like the agent itself (see docs/sessions.md)", "profile", name)
		}
	}
	if !wrap {
		return pool
	}
	return worktreePool{AgentPool: pool, cfg: cfg, sandboxes: sandboxes, log: log}
}

// Acquire implements AgentPool. A profile whose workdir is not in a git
// repository runs in the workdir (logged). A session resumed without a
// worktree keeps running where it began (the CLI finds a session by its
// working directory): that is a session from before worktree was turned on.
func (p worktreePool) Acquire(ctx context.Context, key string, limit pool.Limit, opts agent.Options) (AgentSession, error) {
	prof := p.cfg.Agents[limit.Profile]
	if prof == nil || !prof.Worktree {
		return p.AgentPool.Acquire(ctx, key, limit, opts)
	}
	w, err := locateWorktree(prof, p.cfg.DataDir, opts.SessionID)
	switch {
	case errors.Is(err, errNotRepo):
		p.log.Warn("agent profile has worktree: true but its workdir is not in a git repository: the agent works in the workdir",
			"profile", prof.Name, "workdir", prof.Workdir)
		return p.AgentPool.Acquire(ctx, key, limit, opts)
	case err != nil:
		return nil, fmt.Errorf("worktree: %w", err)
	}
	if !w.exists() {
		if opts.Resume {
			p.log.Info("session resumed in the workdir: it began before worktree was turned on", "session", opts.SessionID)
			return p.AgentPool.Acquire(ctx, key, limit, opts)
		}
		if w.git, err = newWorktreeGit(p.cfg, p.sandboxes, prof); err != nil {
			return nil, err
		}
		wctx, cancel := context.WithTimeout(ctx, worktreeTimeout)
		err := w.create(wctx)
		cancel()
		if err != nil {
			return nil, err
		}
		p.log.Info("worktree created", "session", opts.SessionID, "branch", w.branch, "path", w.path)
	}
	opts.Workdir, opts.Binds = w.apply(opts.Binds)
	pointTools(opts, w)
	return p.AgentPool.Acquire(ctx, key, limit, opts)
}

// pointTools makes the bridge's own agent tools of opts (send_file) work
// in the worktree the agent works in: their working directory becomes its
// cwd, and the hidden paths that contain the worktree (data_dir) stop
// hiding it — send_file never leaves that directory anyway (os.Root), so
// the rest of data_dir stays out of reach. The tools were made for this
// spawn and are not in use yet.
func pointTools(opts agent.Options, w worktree) {
	for _, srv := range opts.MCPServers {
		t, ok := srv.(*agentTools)
		if !ok {
			continue
		}
		t.workdir = opts.Workdir
		t.hidden = slices.DeleteFunc(slices.Clone(t.hidden), func(h string) bool {
			return within(resolved(w.path), resolved(h))
		})
	}
}

// worktreeStatus is the !status line of the conversation's worktree, or ""
// when the profile does not use worktrees.
func (cv *conversation) worktreeStatus() string {
	if !cv.profile.Worktree || cv.row.SessionID == "" || cv.core.cfg.DataDir == "" {
		return ""
	}
	w, err := locateWorktree(cv.profile, cv.core.cfg.DataDir, cv.row.SessionID)
	switch {
	case errors.Is(err, errNotRepo):
		return "\n• worktree: off (the workdir is not in a git repository)"
	case err != nil:
		return "\n• worktree: " + oneLine(err.Error(), 200)
	case !w.exists():
		return "\n• worktree: none yet (made when the agent starts)"
	}
	branch := w.currentBranch()
	if branch == "" {
		branch = "(detached HEAD)"
	}
	return fmt.Sprintf("\n• worktree: branch %s at %s", codeSpan(branch), codeSpan(w.path))
}

// retireWorktree removes the worktree of the conversation's former session
// sessionID after !new or !resume (the agent process is stopped), keeping
// it when it has uncommitted changes or when git could not check it in the
// sandbox. It returns the line to tell the conversation, "" when there was
// no worktree.
func (cv *conversation) retireWorktree(ctx context.Context, sessionID string) string {
	if !cv.profile.Worktree || sessionID == "" || cv.core.cfg.DataDir == "" {
		return ""
	}
	w, err := locateWorktree(cv.profile, cv.core.cfg.DataDir, sessionID)
	if err != nil || !w.exists() {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, worktreeTimeout)
	defer cancel()
	out, err := cv.core.retireWorktree(ctx, cv.profile, w)
	if err != nil {
		cv.log.Error("retire worktree", "session", sessionID, "path", w.path, "removed", out.removed, "err", err)
		if !out.removed {
			return "⚠️ Worktree kept: " + codeSpan(w.path) + " could not be checked or removed: " + oneLine(err.Error(), 300)
		}
		return "⚠️ Could not clean up the worktree " + codeSpan(w.path) + ": " + oneLine(err.Error(), 300)
	}
	cv.log.Info("worktree retired", "session", sessionID, "removed", out.removed, "changes", out.changes, "branch", out.branch, "branch_kept", out.branchKept)
	return out.describe(w)
}

// retireWorktree retires w, a worktree of profile p, with git confined by
// p's sandbox.
func (c *Core) retireWorktree(ctx context.Context, p *config.Agent, w worktree) (worktreeOutcome, error) {
	var err error
	if w.git, err = newWorktreeGit(c.cfg, c.opts.Sandboxes, p); err != nil {
		return worktreeOutcome{}, err
	}
	return w.retire(ctx)
}

// PruneWorktrees removes the clean worktrees of sessions that no
// conversation uses any more (left by pruned conversations, or kept dirty
// by !new and cleaned since) and that did not change since before; a
// worktree with uncommitted changes is kept and logged. It returns how
// many it removed. Run it where PruneSessionStates runs (the retention
// pass): the agents of those sessions are gone.
//
// Git runs in each profile's sandbox, from sandboxes (the map given to
// CoreOptions.Sandboxes); a profile whose sandbox is missing keeps its
// worktrees (logged).
func PruneWorktrees(ctx context.Context, st *store.Store, cfg *config.Config, sandboxes map[string]sandbox.Sandbox,
	before time.Time, logger *slog.Logger) (int, error) {
	inUse, err := st.SessionIDs(ctx)
	if err != nil {
		return 0, fmt.Errorf("prune worktrees: %w", err)
	}
	removed := 0
	for name, prof := range cfg.Agents {
		dir := filepath.Join(cfg.DataDir, WorktreesDir, name)
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue // none for this profile
		}
		for _, e := range ents {
			if ctx.Err() != nil {
				return removed, ctx.Err()
			}
			if !e.IsDir() || inUse[e.Name()] {
				continue
			}
			if fi, err := e.Info(); err != nil || fi.ModTime().After(before) {
				continue
			}
			w, err := locateWorktree(prof, cfg.DataDir, e.Name())
			if err == nil {
				w.git, err = newWorktreeGit(cfg, sandboxes, prof)
			}
			if err != nil {
				logger.Warn("prune worktrees: worktree kept", "profile", name, "session", e.Name(), "err", err)
				continue
			}
			wctx, cancel := context.WithTimeout(ctx, worktreeTimeout)
			out, err := w.retire(wctx)
			cancel()
			switch {
			case err != nil:
				logger.Warn("prune worktrees: could not check or remove a worktree (kept unless removed)", "path", w.path, "removed", out.removed, "err", err)
			case out.removed:
				removed++
				logger.Info("worktree of an unused session removed", "path", w.path, "branch", out.branch, "branch_kept", out.branchKept)
			default:
				logger.Info("worktree of an unused session kept: it has uncommitted changes", "path", w.path, "branch", out.branch, "changes", out.changes)
			}
		}
	}
	return removed, nil
}
