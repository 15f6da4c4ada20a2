package core

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/sessiondir"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
)

// This file is the worker's side of its agents (bridges/core/agents holds
// the pool and how a profile's agent is spawned).

// spawner is how agents are spawned now: CoreOptions.Spawner with the
// containment SetContainment set last.
func (c *Core) spawner() agents.Spawner {
	s := c.opts.Spawner
	if ct := c.contain.Load(); ct != nil {
		s.Containment = *ct
	}
	return s
}

// profileAgentOptions are the spawn options every conversation of profile p
// starts from (agents.Spawner.ProfileOptions under the config in force).
func (c *Core) profileAgentOptions(p *profile.Agent) agent.Options {
	return c.spawner().ProfileOptions(c.cfg(), p)
}

// keepSpares keeps the warm spares of every profile a bot of platforms
// uses (agents.Spawner.KeepSpares), with the agent tools every
// conversation has, and returns a function that stops keeping them.
func (c *Core) keepSpares(platforms map[string]bridges.Platform) (stop func()) {
	tools := func(opts *agent.Options, bot *config.Bot, p *profile.Agent) {
		c.spareTools(opts, bot, p, platforms[bot.Name])
	}
	return c.spawner().KeepSpares(c.pool, c.cfg(), slices.Collect(maps.Keys(platforms)), tools, c.log)
}

// onSpareTaken records the session id of a warm spare the conversation
// was given, before anything is written to it. It reports false when the
// id could not be stored: the process was then given back and delivery is
// retried.
func (cv *conversation) onSpareTaken(ctx context.Context, sess agents.Session, id string) bool {
	if err := cv.st.SetSessionID(ctx, cv.id, id); err != nil {
		cv.log.Error("store the warm spare's session id; retrying", "session", id, "err", err)
		pool, key := cv.core.pool, cv.id
		cv.spawn(func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
			defer cancel()
			if err := pool.Remove(rctx, key); err != nil {
				cv.log.Warn("stop the untracked agent process", "err", err)
			}
		})
		cv.core.readers.Go(func() { drain(sess) })
		cv.after(time.Second, timerRetry, "")
		return false
	}
	cv.log.Info("new session on a warm spare", "session", id)
	cv.row.SessionID, cv.resume, cv.freshRetry = id, false, false
	return true
}

// spareTools gives a spare's options the bridge's agent tools, as every
// conversation has them (conversation.withAgentTools): the same server
// name and allowed tools, so a conversation can take the spare. The server
// here only answers the CLI's start-up (initialize, tools/list); the pool
// binds the spare to the conversation's own server when it hands it over.
func (c *Core) spareTools(opts *agent.Options, bot *config.Bot, p *profile.Agent, pl bridges.Platform) {
	proto := &conversation{core: c, bot: bot, profile: p, platform: pl, limits: pl.Limits(), log: c.log}
	proto.withAgentTools(opts)
}

// worktreeStatus is the !status line of the conversation's worktree, or ""
// when the profile does not use worktrees.
func (cv *conversation) worktreeStatus() string {
	if cv.core.opts.Spawner.Worktrees == nil {
		return ""
	}
	return cv.core.opts.Spawner.Worktrees.Status(cv.profile, cv.row.SessionID)
}

// retireWorktree removes the worktree of the conversation's former session
// sessionID after !new or !resume (see agents.Worktrees.Retire) and returns the
// line to tell the conversation, "" when there was none.
func (cv *conversation) retireWorktree(ctx context.Context, sessionID string) string {
	if cv.core.opts.Spawner.Worktrees == nil {
		return ""
	}
	return cv.core.opts.Spawner.Worktrees.Retire(ctx, cv.profile, sessionID, cv.log)
}

// agentOptions builds the spawn options from the bot's agent profile and the
// conversation's overrides. It runs at every spawn and resume, so a stored
// bypassPermissions override applies only while the profile still has
// allow_bypass (see effectiveMode).
func (cv *conversation) agentOptions() agent.Options {
	opts := cv.core.profileAgentOptions(cv.profile)
	opts.SessionID = cv.row.SessionID
	opts.Resume = cv.resume && !cv.freshRetry
	if cfg := cv.core.cfg(); cfg.DataDir != "" {
		// The session's private CLI state lives with the bridge's data, which
		// the sandbox hides — except this directory.
		opts.StateDir = filepath.Join(cfg.DataDir, sessiondir.Dir, cv.row.SessionID)
	}
	if cv.row.Model != "" {
		opts.Model = cv.row.Model
	}
	opts.PermissionMode = cv.effectiveMode()
	if cv.profile.Kind == profile.KindACP { // the agent's own modes (commands.go)
		opts.PermissionMode = agents.StoredMode(cv.row.PermissionMode)
	}
	cv.withAgentTools(&opts)
	return opts
}

// bypassAllowed reports whether bypassPermissions may reach the CLI now:
// only while the profile has allow_bypass (checked at every spawn, so a
// stored "!mode bypassPermissions" stops applying once it is turned off).
func (cv *conversation) bypassAllowed() bool {
	return cv.profile.AllowBypass
}

// noteRefusedBypass tells the conversation, once per worker, that its
// stored bypassPermissions override is not applied.
func (cv *conversation) noteRefusedBypass(ctx context.Context) {
	if cv.row.PermissionMode != profile.ModeBypass || cv.bypassAllowed() || cv.bypassRefusalShown {
		return
	}
	cv.bypassRefusalShown = true
	cv.log.Warn("stored bypassPermissions override ignored: allow_bypass is off", "mode", cv.profileMode())
	cv.notice(ctx, "🔐 This conversation was set to "+render.CodeSpan(profile.ModeBypass)+", but the agent's allow_bypass is now off, "+
		"so the agent runs in "+render.CodeSpan(cv.profileMode())+" mode. An admin can choose another mode with `"+bridges.CommandPrefix+"mode`.")
}
