package core

import (
	"context"
	"log/slog"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/config"
)

// Worktrees gives each session of a profile with worktree: true a git
// worktree of its own. It is a spawn hook, not a wrapper of the pool
// (DESIGN.md §2: a wrapper hides the wrapped value's optional abilities):
// the core sets agent.Options.Prepare to PrepareSpawn for every spawn, so
// the pool keeps its abilities (WarmPool) and a profile's warm spares
// start in their own worktrees as conversations do. bridges/worktree implements it.
type Worktrees interface {
	// PrepareSpawn returns the options to start opts, a session of
	// profile p, with: unchanged for a profile without worktrees. It runs
	// in agent.Start, off the conversation's worker, so git's time does
	// not hold the conversation up; it may block. For a warm spare
	// (spare) it fails rather than start the spare outside a worktree:
	// a conversation that takes a spare must find it in its worktree.
	PrepareSpawn(ctx context.Context, p *config.Agent, opts agent.Options, spare bool) (agent.Options, error)
	// Status is the !status line of the worktree of session sessionID of
	// profile p, or "" when the profile does not use worktrees.
	Status(p *config.Agent, sessionID string) string
	// Retire removes the worktree of the former session sessionID of
	// profile p (its agent process is stopped), keeping it when it has
	// uncommitted changes or could not be checked. It returns the line to
	// tell the conversation, "" when there was no worktree.
	Retire(ctx context.Context, p *config.Agent, sessionID string, log *slog.Logger) string
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
