package core

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
	"github.com/agentbridge/agentbridge/agent/sandbox"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// worktreeTimeout bounds the git commands of one worktree operation.
const worktreeTimeout = 2 * time.Minute

// Worktrees gives each session of a profile with worktree: true a git
// worktree of its own. It is a spawn hook, not a wrapper of the pool
// (DESIGN.md §2: a wrapper hides the wrapped value's optional abilities):
// the core sets agent.Options.Prepare to PrepareSpawn for every spawn, so
// the pool keeps its abilities (WarmPool) and a profile's warm spares
// start in their own worktrees as conversations do. NewWorktrees makes one.
type Worktrees interface {
	// PrepareSpawn returns the options to start opts, a session of
	// profile p, with: unchanged for a profile without worktrees. It runs
	// in agent.Start, off the conversation's worker, so git's time does
	// not hold the conversation up; it may block.
	PrepareSpawn(ctx context.Context, p *config.Agent, opts agent.Options) (agent.Options, error)
	// Status is the !status line of the worktree of session sessionID of
	// profile p, or "" when the profile does not use worktrees.
	Status(p *config.Agent, sessionID string) string
	// Retire removes the worktree of the former session sessionID of
	// profile p (its agent process is stopped), keeping it when it has
	// uncommitted changes or could not be checked. It returns the line to
	// tell the conversation, "" when there was no worktree.
	Retire(ctx context.Context, p *config.Agent, sessionID string, log *slog.Logger) string
}

// worktreeHook is NewWorktrees' Worktrees.
type worktreeHook struct {
	cfg       *config.Config
	sandboxes map[string]sandbox.Sandbox // by profile: where the bridge's git runs (worktree_git.go)
	log       *slog.Logger
}

var _ Worktrees = worktreeHook{}

// NewWorktrees returns the worktrees of cfg's profiles; sandboxes are the
// profiles' sandboxes (CoreOptions.Sandboxes), where the bridge's git on
// a worktree runs. It warns about profiles that use worktrees unsandboxed.
func NewWorktrees(cfg *config.Config, sandboxes map[string]sandbox.Sandbox, log *slog.Logger) Worktrees {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Agents)) {
		if a := cfg.Agents[name]; a.Worktree && a.Sandbox == config.SandboxNone {
			log.Warn("agent profile with worktree: true runs without a sandbox: the bridge's git on its worktrees runs unconfined too, "+
				"as the bridge's user, like the agent itself (see docs/sessions.md)", "profile", name)
		}
	}
	return worktreeHook{cfg: cfg, sandboxes: sandboxes, log: log}
}

// PrepareSpawn implements Worktrees: before a session of a profile with
// worktree: true starts, it makes (or finds) the session's worktree and
// points the spawn at it. A profile whose workdir is not in a git
// repository runs in the workdir (logged). A session resumed without a
// worktree keeps running where it began (the CLI finds a session by its
// working directory): that is a session from before worktree was turned on.
func (h worktreeHook) PrepareSpawn(ctx context.Context, prof *config.Agent, opts agent.Options) (agent.Options, error) {
	if prof == nil || !prof.Worktree || h.cfg.DataDir == "" {
		return opts, nil
	}
	w, err := locateWorktree(prof, h.cfg.DataDir, opts.SessionID)
	switch {
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

// WorkdirMover is an agent tool server that works in the agent's working
// directory (the bridge's send_file): PrepareSpawn moves it into the
// session's worktree before the tools are in use.
type WorkdirMover interface {
	// MoveTo makes the server work in workdir, which lies inside root (a
	// worktree under data_dir): paths the server hides that contain root
	// stop hiding it. Called once, before the server serves a tool call.
	MoveTo(workdir, root string)
}

// pointTools makes the bridge's own agent tools of opts (send_file) work
// in the worktree the agent works in (see WorkdirMover). A warm spare's
// servers are placeholders until a conversation takes it: the core then
// moves the conversation's own (moveSpareTools).
func pointTools(opts agent.Options, w worktree) {
	for _, srv := range opts.MCPServers {
		if m, ok := srv.(WorkdirMover); ok {
			m.MoveTo(opts.Workdir, w.path)
		}
	}
}

// Status implements Worktrees.
func (h worktreeHook) Status(p *config.Agent, sessionID string) string {
	if !p.Worktree || sessionID == "" || h.cfg.DataDir == "" {
		return ""
	}
	w, err := locateWorktree(p, h.cfg.DataDir, sessionID)
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

// Retire implements Worktrees, with git confined by p's sandbox.
func (h worktreeHook) Retire(ctx context.Context, p *config.Agent, sessionID string, log *slog.Logger) string {
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
			return "⚠️ Worktree kept: " + codeSpan(w.path) + " could not be checked or removed: " + oneLine(err.Error(), 300)
		}
		return "⚠️ Could not clean up the worktree " + codeSpan(w.path) + ": " + oneLine(err.Error(), 300)
	}
	log.Info("worktree retired", "session", sessionID, "removed", out.removed, "changes", out.changes, "branch", out.branch, "branch_kept", out.branchKept)
	return out.describe(w)
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

// worktreeStatus is the !status line of the conversation's worktree, or ""
// when the profile does not use worktrees.
func (cv *conversation) worktreeStatus() string {
	if cv.core.opts.Worktrees == nil {
		return ""
	}
	return cv.core.opts.Worktrees.Status(cv.profile, cv.row.SessionID)
}

// retireWorktree removes the worktree of the conversation's former session
// sessionID after !new or !resume (see Worktrees.Retire) and returns the
// line to tell the conversation, "" when there was none.
func (cv *conversation) retireWorktree(ctx context.Context, sessionID string) string {
	if cv.core.opts.Worktrees == nil {
		return ""
	}
	return cv.core.opts.Worktrees.Retire(ctx, cv.profile, sessionID, cv.log)
}

// moveSpareTools points the conversation's agent tools at the worktree
// of the warm spare it was given (session id sid): the spare started in
// its own worktree (opts.Prepare ran with sid) while its tool servers
// were placeholders, bound to these at hand-over. Preparing sid's spawn
// again as a resume finds that worktree, creates nothing and moves the
// tools (WorkdirMover). It runs before the conversation sends anything.
func moveSpareTools(ctx context.Context, opts agent.Options, sid string, log *slog.Logger) {
	if opts.Prepare == nil {
		return
	}
	opts.SessionID, opts.Resume = sid, true
	if _, err := opts.Prepare(ctx, opts); err != nil {
		log.Warn("point the agent tools at the warm spare's worktree", "session", sid, "err", err)
	}
}
