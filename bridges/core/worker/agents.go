package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/agent"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/sessiondir"
	"github.com/agentbridge/agentbridge/bridges/core/toolconv"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/store"
	"github.com/google/uuid"
)

// This file is the worker's side of its agent process (bridges/core/agents
// holds the pool and how a profile's agent is spawned): its spawn options
// with the bridge's tools, a warm spare taken, the session's files with
// replicas, worktrees, stopping the process, moving to another profile.

// onSpareTaken records the session id of a warm spare the conversation
// was given, before anything is written to it. It reports false when the
// id could not be stored: the process was then given back and delivery is
// retried.
func (cv *conversation) onSpareTaken(ctx context.Context, sess agents.Session, id string) bool {
	if err := cv.st.SetSessionID(ctx, cv.id, id); err != nil {
		cv.log.Error("store the warm spare's session id; retrying", "session", id, "err", err)
		pool, key := cv.host.Pool(), cv.id
		cv.spawn(func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
			defer cancel()
			if err := pool.Remove(rctx, key); err != nil {
				cv.log.Warn("stop the untracked agent process", "err", err)
			}
		})
		cv.host.Read(func() { agents.Drain(sess) })
		cv.timers.After(time.Second, timerKey{timerRetry, ""})
		return false
	}
	cv.log.Info("new session on a warm spare", "session", id)
	cv.row.SessionID, cv.resume, cv.freshRetry = id, false, false
	return true
}

// SpareTools gives a spare's options, for the bots of platforms, the
// bridge's agent tools as every conversation has them
// (conversation.withAgentTools): the same server name and allowed tools,
// so a conversation can take the spare. The server here only answers the
// CLI's start-up (initialize, tools/list); the pool binds the spare to
// the conversation's own server when it hands it over.
func SpareTools(h Host, platforms map[string]bridges.Platform) agents.SpareTools {
	return func(opts *agent.Options, bot *config.Bot, p *profile.Agent) {
		pl := platforms[bot.Name]
		proto := &conversation{host: h, opts: h.Options(), bot: bot, profile: p, platform: pl, limits: pl.Limits(), log: h.Log()}
		proto.withAgentTools(opts)
	}
}

// WarmResumeOptions are the spawn options that resume conversation row
// (of bot, on profile p and platform pl) ahead of its return after a
// restart (Core's warm resume): with replicas the agent starts from the
// session files in the store, stamped with them (ownership.Restore); an
// error when they could not be restored or were never stored.
func WarmResumeOptions(ctx context.Context, h Host, row store.Conversation, bot *config.Bot, p *profile.Agent, pl bridges.Platform) (agent.Options, error) {
	key := bridges.ConversationKey(row.Key)
	cv := &conversation{host: h, opts: h.Options(), key: key, id: row.ID, bot: bot, profile: p, platform: pl, limits: pl.Limits(),
		log: h.Log().With("key", key, "conversation", row.ID), row: row, resume: true}
	opts, err := ownership.Restore(ctx, cv.opts.Ownership, cv.id, cv.agentOptions(), cv.log)
	if err == nil && cv.opts.Ownership != nil && opts.ResumeStamp == "" && !sessiondir.HasSession(opts.StateDir, opts.SessionID) {
		err = errors.New("the session was never stored: nothing to resume")
	}
	return opts, err
}

// worktreeStatus is the !status line of the conversation's worktree, or ""
// when the profile does not use worktrees.
func (cv *conversation) worktreeStatus() string {
	if cv.host.Spawner().Worktrees == nil {
		return ""
	}
	return cv.host.Spawner().Worktrees.Status(cv.profile, cv.row.SessionID)
}

// retireWorktree removes the worktree of the conversation's former session
// sessionID after !new or !resume (see agents.Worktrees.Retire) and returns the
// line to tell the conversation, "" when there was none.
func (cv *conversation) retireWorktree(ctx context.Context, sessionID string) string {
	if cv.host.Spawner().Worktrees == nil {
		return ""
	}
	return cv.host.Spawner().Worktrees.Retire(ctx, cv.profile, sessionID, cv.log)
}

// agentOptions are the spawn options of the conversation's agent: its
// profile's (agents.Spawner.ProfileOptions), its session and overrides
// (agents.ConvOptions), the bridge's tools. Built at every spawn and
// resume.
func (cv *conversation) agentOptions() agent.Options {
	cfg := cv.host.Config()
	opts := agents.ConvOptions(cv.host.Spawner().ProfileOptions(cfg, cv.profile), cv.profile, cv.row, cv.resume && !cv.freshRetry, cfg.DataDir)
	cv.withAgentTools(&opts)
	return opts
}

// noteRefusedBypass tells the conversation, once per worker, that its
// stored bypassPermissions override is not applied.
func (cv *conversation) noteRefusedBypass(ctx context.Context) {
	if cv.row.PermissionMode != profile.ModeBypass || cv.profile.AllowBypass || cv.bypassRefusalShown {
		return
	}
	cv.bypassRefusalShown = true
	cv.log.Warn("stored bypassPermissions override ignored: allow_bypass is off", "mode", agents.PermissionMode(cv.profile))
	cv.notice(ctx, "🔐 This conversation was set to "+render.CodeSpan(profile.ModeBypass)+", but the agent's allow_bypass is now off, "+
		"so the agent runs in "+render.CodeSpan(agents.PermissionMode(cv.profile))+" mode. An admin can choose another mode with `"+bridges.CommandPrefix+"mode`.")
}

// withAgentTools gives the agent process of opts the bridge's tools: the
// MCP server (for opts.Workdir) and the --allowed-tools entries that let
// the CLI call them without asking (they act on this conversation only).
// A profile's disallowed_tools still wins over them in the CLI. Without
// CoreOptions.Tools the agent gets none.
func (cv *conversation) withAgentTools(opts *agent.Options) {
	if cv.opts.Tools == nil {
		return
	}
	tc := &toolconv.Chat{
		Conv: cv.key, ID: cv.id, OwnerID: cv.row.OwnerUserID, Agent: cv.profile, Bot: cv.bot.Name,
		Platform: cv.platform, Limits: cv.limits, Budget: cv.budget, Dir: opts.Workdir,
		Secret: agents.SecretPaths(cv.host.Config()), Logger: cv.log.With("mcp_server", toolconv.ServerName),
		Now: cv.opts.Clock.Now, Metrics: cv.opts.Metrics, Ask: askApproval(cv.host, cv.key),
	}
	opts.MCPServers = map[string]agent.MCPServer{toolconv.ServerName: cv.opts.Tools.Server(tc)}
	opts.AllowedTools = append(opts.AllowedTools, cv.opts.ToolNames.Allowed()...)
}

// askApproval opens an agent tool's approval card on the running worker
// of key (the agent's tools run only while it does), waiting for room in
// its queue until ctx ends: the process, and its tools, may outlive the
// worker that spawned it.
func askApproval(h Host, key bridges.ConversationKey) func(ctx context.Context, a toolconv.Approval) error {
	return func(ctx context.Context, a toolconv.Approval) error {
		w, ok := h.Worker(key)
		if !ok {
			return toolconv.ErrNoWorker
		}
		done := make(chan error, 1)
		if err := w.cv.q.PushWait(ctx, inCall{func(ctx context.Context, cv *conversation) { done <- cv.cards.OpenApproval(ctx, a) }}); err != nil {
			return err
		}
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// saveSession stores the session's CLI files after a turn (ownership.Ownership).
func (cv *conversation) saveSession(ctx context.Context) {
	if own := cv.opts.Ownership; own != nil && cv.row.SessionID != "" {
		own.SaveSession(ctx, cv.id, cv.row.SessionID, cv.agentOptions().StateDir)
	}
}

// onFreshStart is told (onAcquired) that the session was started anew
// because the replica that ran it stopped before any of its turns was
// stored (ownership.ResumeOptions): the next spawns resume it once a message is sent
// here. The thread is told what happened.
func (cv *conversation) onFreshStart(ctx context.Context) {
	cv.log.Info("the session was never stored by the replica that ran it: started anew with its id", "session", cv.row.SessionID)
	cv.notice(ctx, "⚠️ The agent was restarted on another replica: the one running this thread stopped before the session's first turn was saved, so the session starts anew.")
}

// interruptTurn ends a turn cut short by the process ending: the live
// message keeps what it showed, marked as interrupted.
func (cv *conversation) interruptTurn(ctx context.Context) {
	if t := cv.turn; t != nil {
		if t.Live.Posted {
			cv.finishLive(ctx, render.Tail(render.Join(t.Segs)+"\n\n_(interrupted)_", cv.screen.MaxRunes()))
		}
		cv.screen.StopStream(ctx, t.Turn, "\n\n_(interrupted)_")
	}
	cv.endTurn(ctx)
}

// closeSession stops the live process (if any) and forgets it: its later
// events are ignored. Open cards close with status.
func (cv *conversation) closeSession(ctx context.Context, status string) {
	cv.cards.ExpireAll(ctx, status)
	cv.endTurn(ctx)
	if cv.sess == nil {
		return
	}
	if err := cv.sess.Interrupt(ctx); err != nil {
		cv.log.Debug("interrupt before close", "err", err)
	}
	cv.sess = nil
	cv.gen++ // events still queued from the old process are ignored
	rctx, cancel := context.WithTimeout(ctx, removeTimeout)
	defer cancel()
	if err := cv.host.Pool().Remove(rctx, cv.id); err != nil {
		cv.log.Warn("stop agent process", "err", err)
	}
}

// moveToProfile stops the conversation's agent and moves it to profile p
// in a fresh session (the store first): everything p decides — sandbox,
// egress, cgroups, rules, approvals, limits, spares — applies from its
// next spawn, and the "Always allow" grants given for the old profile end
// (removed by by). status is what open cards show. It returns what to
// tell besides the move: the grants removed, what became of the old
// session's worktree.
func (cv *conversation) moveToProfile(ctx context.Context, p *profile.Agent, by, status string) (string, error) {
	override := p.Name
	if override == cv.row.Agent {
		override = "" // its own profile
	}
	id, old := uuid.NewString(), cv.row.SessionID
	revoked, err := cv.st.SwitchAgent(ctx, cv.id, override, id, by)
	if err != nil {
		return "", fmt.Errorf("move conversation to profile %s: %w", p.Name, err)
	}
	cv.closeSession(ctx, status)
	var notes []string
	if revoked > 0 {
		notes = append(notes, fmt.Sprintf("🔐 The %d \"Always allow\" grant(s) given to the previous agent were removed: the new one asks again.", revoked))
	}
	if wt := cv.retireWorktree(ctx, old); wt != "" { // under the profile it leaves
		notes = append(notes, wt)
	}
	cv.profile, cv.agentGone = p, ""
	cv.row.AgentOverride, cv.row.SessionID, cv.row.Model, cv.row.PermissionMode = override, id, "", ""
	cv.resume, cv.freshRetry, cv.restartAfterTurn, cv.bypassRefusalShown = false, false, false, false
	return strings.Join(notes, "\n"), nil
}

// revertAgent moves a conversation whose !agent profile a reload took
// away back to its default, telling the thread, once its agent is idle.
// It reports whether the message at hand must wait.
func (cv *conversation) revertAgent(ctx context.Context) bool {
	if cv.agentGone == "" {
		return false
	}
	if cv.busyWithTurn() {
		return true // the turn's end delivers again; a background task does not hold the move (the config no longer allows its profile)
	}
	gone, p := cv.agentGone, agents.BaseProfile(cv.host.Config(), cv.bot, cv.row)
	if p == nil {
		return false // the conversation keeps the profile it has (the core refuses such a config)
	}
	wt, err := cv.moveToProfile(ctx, p, "config reload", "⌛ Expired: agent "+gone+" is no longer available.")
	if err != nil {
		if !cv.fenced(err) {
			cv.log.Error("move conversation back to its default profile; retrying", "agent", gone, "err", err)
			cv.timers.After(time.Second, timerKey{timerRetry, ""})
		}
		return true
	}
	cv.log.Info("conversation moved back to its default profile", "agent", gone, "to", p.Name)
	text := render.AgentGoneText(gone, p.Name)
	if wt != "" {
		text += "\n" + wt
	}
	cv.notice(ctx, text)
	return false
}
