package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/sessiondir"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// worktreeTimeout bounds the git commands of one worktree operation.
const worktreeTimeout = 2 * time.Minute

// worktreeHook is New's agents.Worktrees.
type worktreeHook struct {
	cfg       *config.Config
	sandboxes map[string]sandbox.Sandbox // by profile: where the bridge's git runs (worktree_git.go)
	log       *slog.Logger
}

var _ agents.Worktrees = worktreeHook{}

// New returns the worktrees of cfg's profiles; sandboxes are the
// profiles' sandboxes (the core's agents.Spawner), where the bridge's git on
// a worktree runs. It warns about profiles that use worktrees unsandboxed.
func New(cfg *config.Config, sandboxes map[string]sandbox.Sandbox, log *slog.Logger) agents.Worktrees {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Agents)) {
		if a := cfg.Agents[name]; a.Worktree && a.Sandbox == profile.SandboxNone {
			log.Warn("agent profile with worktree: true runs without a sandbox: the bridge's git on its worktrees runs unconfined too, "+
				"as the bridge's user, like the agent itself (see docs/sessions.md)", "profile", name)
		}
	}
	return worktreeHook{cfg: cfg, sandboxes: sandboxes, log: log}
}

// PrepareSpawn implements agents.Worktrees: before a session of a profile with
// worktree: true starts, it makes (or finds) the session's worktree and
// points the spawn at it. A profile whose workdir is not in a git
// repository runs in the workdir (logged); it gets no warm spare (the
// spare's start fails and is retried with back-off: the workdir may
// become a repository). A session resumed without a
// worktree keeps running where it began (the CLI finds a session by its
// working directory): that is a session from before worktree was turned on.
func (h worktreeHook) PrepareSpawn(ctx context.Context, prof *profile.Agent, opts agent.Options, spare bool) (agent.Options, error) {
	if prof == nil || !prof.Worktree || h.cfg.DataDir == "" {
		return opts, nil
	}
	w, err := locateWorktree(prof, h.cfg.DataDir, opts.SessionID)
	switch {
	case errors.Is(err, errNotRepo) && spare:
		return opts, fmt.Errorf("worktree: no warm spare while the workdir %s is not in a git repository", prof.Workdir)
	case errors.Is(err, errNotRepo):
		h.log.Warn("agent profile has worktree: true but its workdir is not in a git repository: the agent works in the workdir",
			"profile", prof.Name, "workdir", prof.Workdir)
		return opts, nil
	case err != nil:
		return opts, fmt.Errorf("worktree: %w", err)
	}
	if !w.exists() {
		if opts.Resume {
			h.log.Info("session resumed in the workdir: it began before worktree was turned on", "session", opts.SessionID)
			return opts, nil
		}
		if w.git, err = newWorktreeGit(h.cfg, h.sandboxes, prof); err != nil {
			return opts, err
		}
		wctx, cancel := context.WithTimeout(ctx, worktreeTimeout)
		err := w.create(wctx)
		cancel()
		if err != nil {
			return opts, err
		}
		h.log.Info("worktree created", "session", opts.SessionID, "branch", w.branch, "path", w.path)
	}
	opts.Workdir, opts.Binds = w.apply(opts.Binds)
	pointTools(opts, w)
	return opts, nil
}

// pointTools makes the bridge's own agent tools of opts (send_file) work
// in the worktree the agent works in (see agents.WorkdirMover). A warm spare's
// servers are placeholders until a conversation takes it: the core then
// moves the conversation's own.
func pointTools(opts agent.Options, w worktree) {
	for _, srv := range opts.MCPServers {
		if m, ok := srv.(agents.WorkdirMover); ok {
			m.MoveTo(opts.Workdir, w.path)
		}
	}
}

// Status implements agents.Worktrees.
func (h worktreeHook) Status(p *profile.Agent, sessionID string) string {
	if !p.Worktree || sessionID == "" || h.cfg.DataDir == "" {
		return ""
	}
	w, err := locateWorktree(p, h.cfg.DataDir, sessionID)
	switch {
	case errors.Is(err, errNotRepo):
		return "\n• worktree: off (the workdir is not in a git repository)"
	case err != nil:
		return "\n• worktree: " + textcut.OneLine(err.Error(), 200)
	case !w.exists():
		return "\n• worktree: none yet (made when the agent starts)"
	}
	branch := w.currentBranch()
	if branch == "" {
		branch = "(detached HEAD)"
	}
	return fmt.Sprintf("\n• worktree: branch %s at %s", render.CodeSpan(branch), render.CodeSpan(w.path))
}

// Retire implements agents.Worktrees, with git confined by p's sandbox.
func (h worktreeHook) Retire(ctx context.Context, p *profile.Agent, sessionID string, log *slog.Logger) string {
	if !p.Worktree || sessionID == "" || h.cfg.DataDir == "" {
		return ""
	}
	w, err := locateWorktree(p, h.cfg.DataDir, sessionID)
	if err != nil || !w.exists() {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, worktreeTimeout)
	defer cancel()
	var out worktreeOutcome
	if w.git, err = newWorktreeGit(h.cfg, h.sandboxes, p); err == nil {
		out, err = w.retire(ctx)
	}
	if err != nil {
		log.Error("retire worktree", "session", sessionID, "path", w.path, "removed", out.removed, "err", err)
		if !out.removed {
			return "⚠️ Worktree kept: " + render.CodeSpan(w.path) + " could not be checked or removed: " + textcut.OneLine(err.Error(), 300)
		}
		return "⚠️ Could not clean up the worktree " + render.CodeSpan(w.path) + ": " + textcut.OneLine(err.Error(), 300)
	}
	log.Info("worktree retired", "session", sessionID, "removed", out.removed, "changes", out.changes, "branch", out.branch, "branch_kept", out.branchKept)
	return out.describe(w)
}

// droppedSpareAge is how old a worktree without session state must be to
// count as a dropped warm spare's (a starting spare makes its worktree a
// moment before its state directory).
const droppedSpareAge = 10 * time.Minute

// droppedSpare reports whether the worktree of session id, changed last at
// mod, belonged to a warm spare that was stopped without serving a
// conversation: no conversation uses the session (the caller checked) and
// its state directory is gone (the pool removes a dropped spare's).
func droppedSpare(dataDir, id string, mod time.Time) bool {
	if time.Since(mod) < droppedSpareAge {
		return false
	}
	_, err := os.Stat(filepath.Join(dataDir, sessiondir.Dir, id))
	return errors.Is(err, fs.ErrNotExist)
}

// Prune removes the clean worktrees of sessions that no
// conversation uses any more (left by pruned conversations, or kept dirty
// by !new and cleaned since) and that did not change since before, and
// those of dropped warm spares (droppedSpare) whatever before says:
// spares are recycled often. A worktree with uncommitted changes is kept
// and logged. It returns how
// many it removed. Run it where sessiondir.Prune runs (the retention
// pass): the agents of those sessions are gone.
//
// Git runs in each profile's sandbox, from sandboxes (the map given to
// the core's agents.Spawner); a profile whose sandbox is missing keeps its
// worktrees (logged).
func Prune(ctx context.Context, st *store.Store, cfg *config.Config, sandboxes map[string]sandbox.Sandbox,
	before time.Time, logger *slog.Logger) (int, error) {
	inUse, err := st.SessionIDs(ctx)
	if err != nil {
		return 0, fmt.Errorf("prune worktrees: %w", err)
	}
	removed := 0
	for name, prof := range cfg.Agents {
		dir := filepath.Join(cfg.DataDir, Dir, name)
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
			if fi, err := e.Info(); err != nil || fi.ModTime().After(before) && !droppedSpare(cfg.DataDir, e.Name(), fi.ModTime()) {
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
