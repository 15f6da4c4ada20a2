package core

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// This file is what a chat command (bridges/features/commands, above the core)
// acts through: Conv's methods for the commands (!resume's exchange
// between two workers is in resume.go), the profiles a conversation may
// move to (!agent) and the agent's own modes and models (an ACP agent).

// ID is the store's id of the conversation.
func (c Conv) ID() string { return c.cv.id }

// Bot is the conversation's bot.
func (c Conv) Bot() *config.Bot { return c.cv.bot }

// Profile is the conversation's agent profile.
func (c Conv) Profile() *profile.Agent { return c.cv.profile }

// Store is the store, fenced to the worker's lease.
func (c Conv) Store() *store.Store { return c.cv.st }

// Model is the model the agent runs ("" = the CLI's default).
func (c Conv) Model() string { return c.cv.effectiveModel() }

// Mode is the permission mode the agent runs in.
func (c Conv) Mode() string { return c.cv.effectiveMode() }

// SessionID is the conversation's agent session id ("" = none yet).
func (c Conv) SessionID() string { return c.cv.row.SessionID }

// Access is the bridge's one access decision (CoreOptions.Access).
func (c Conv) Access() *access.Authority { return c.cv.core.opts.Access }

// Privately shows text to who only where the platform can (an ephemeral
// message), else posts it into the conversation, naming who.
func (c Conv) Privately(ctx context.Context, who Person, text string) {
	if eph, ok := c.cv.platform.(bridges.Ephemeral); ok {
		err := eph.PostEphemeral(ctx, c.cv.key, who.ID, text)
		if err == nil {
			return
		}
		c.cv.log.Warn("private answer failed; posting it in the conversation", "err", err)
	}
	c.cv.notice(ctx, render.Mention(who.Name, who.ID)+" "+text)
}

// Rules runs "!rules" with its argument words through the conversation's
// cards (CardSet.Rules).
func (c Conv) Rules(ctx context.Context, args []string, who Person) {
	c.cv.cards.Rules(ctx, args, who)
}

// Status is the !status text for who.
func (c Conv) Status(ctx context.Context, who Person) string {
	cv := c.cv
	return cv.statusText() + cv.hookStatusLines() + cv.outbox.StatusLine(ctx) + cv.worktreeStatus() + cv.connectionLines(who)
}

// BudgetLeft is the !cost lines of what user has left of the bot's
// budgets, "" when it has no limit.
func (c Conv) BudgetLeft(ctx context.Context, user string) (string, error) {
	return c.cv.budgetLines(ctx, user)
}

// StopTurn interrupts the running turn (!stop); running false means
// nothing ran.
func (c Conv) StopTurn(ctx context.Context) (running bool, err error) {
	cv := c.cv
	if cv.sess == nil || (cv.turn == nil && len(cv.inflight) == 0) {
		return false, nil
	}
	if err := cv.sess.Interrupt(ctx); err != nil {
		return true, err
	}
	cv.stopping = true
	// A message the CLI has not begun is not stopped by the interrupt (it
	// stops only the running turn): the CLI would begin it afterwards, and
	// a Stop pressed right after Send would do nothing. Each is interrupted
	// as it begins (onLifecycle).
	for u, sm := range cv.inflight {
		if !sm.started {
			if cv.stopUnstarted == nil {
				cv.stopUnstarted = map[string]bool{}
			}
			cv.stopUnstarted[u] = true
		}
	}
	return true, nil
}

// NewSession gives the conversation a fresh session, cancelling the
// messages the old one had not finished (by names who asked), and returns
// what became of the old session's worktree ("" for nothing to tell).
// ErrStarting: the agent is starting. Other errors are the store's.
func (c Conv) NewSession(ctx context.Context, by string) (worktree string, err error) {
	cv := c.cv
	if cv.acquiring {
		return "", ErrStarting
	}
	id, old := uuid.NewString(), cv.row.SessionID
	if err := cv.st.ResetSession(ctx, cv.id, id); err != nil {
		return "", fmt.Errorf("reset session: %w", err)
	}
	cv.closeSession(ctx, "⌛ Expired: a new session was started.")
	for _, sm := range cv.inflight {
		cv.finishInbox(ctx, sm.ledgerID, store.InboxCancelled, "!new by "+by)
	}
	clear(cv.inflight)
	clear(cv.stopUnstarted)
	cv.row.SessionID, cv.resume, cv.freshRetry = id, false, false
	return cv.retireWorktree(ctx, old), nil
}

// SetModel stores the conversation's model ("" = the profile's) and
// tells the running agent; live is the agent's refusal (the model is
// stored anyway and applies at its restart), err the store's.
func (c Conv) SetModel(ctx context.Context, model string) (live, err error) {
	cv := c.cv
	if err := cv.st.SetModel(ctx, cv.id, model); err != nil {
		return nil, fmt.Errorf("store model override: %w", err)
	}
	cv.row.Model = model
	if cv.sess == nil {
		return nil, nil
	}
	target := cv.effectiveModel()
	if target == "" {
		target = "default"
	}
	return cv.sess.SetModel(ctx, target), nil
}

// SetMode stores the conversation's permission mode and applies it: at
// once, or, entering or leaving bypassPermissions (which needs a restart),
// after the current turn (later). live is the running agent's refusal
// (the mode is stored anyway), err the store's.
func (c Conv) SetMode(ctx context.Context, mode string) (later bool, live, err error) {
	cv := c.cv
	old := cv.effectiveMode()
	if err := cv.st.SetPermissionMode(ctx, cv.id, mode); err != nil {
		return false, nil, fmt.Errorf("store permission mode override: %w", err)
	}
	cv.row.PermissionMode = mode
	switch {
	case cv.sess == nil:
	case mode == profile.ModeBypass || old == profile.ModeBypass:
		// The CLI only enters or leaves bypass at launch: restart it.
		if cv.turn != nil || len(cv.inflight) > 0 || cv.cards.Len() > 0 {
			cv.restartAfterTurn = true
			return true, nil, nil
		}
		cv.restartProcess(ctx)
	default:
		return false, cv.sess.SetPermissionMode(ctx, mode), nil
	}
	return false, nil, nil
}

// ResumeState says whether a session can be resumed here now: nil, or
// ErrResuming or ErrWorking.
func (c Conv) ResumeState() error {
	cv := c.cv
	switch {
	case cv.resuming:
		return ErrResuming
	case cv.acquiring || cv.turn != nil || len(cv.inflight) > 0 || cv.cards.Len() > 0:
		return ErrWorking
	}
	return nil
}

// activity is what recording ledger message m as sent notes for !sessions
// (convstore.Store.MarkSent): the conversation's last activity, and its first prompt
// as the session's summary.
func activity(m store.InboxMessage) string {
	if strings.TrimSpace(m.Text) == "" {
		return "(attachment)"
	}
	return m.Text
}

// statusText is the first part of !status: the session, the agent's
// state, the queue, the cards, model and mode, spares and limits.
func (cv *conversation) statusText() string {
	state := "not running (starts with the next message)"
	switch {
	case cv.acquiring:
		state = "starting"
	case cv.sess != nil && cv.turn != nil:
		state = "live, turn running"
	case cv.sess != nil:
		state = "live, idle"
	}
	model, mode := render.CodeSpan(textcut.OrBlank(cv.effectiveModel(), "default")), render.CodeSpan(cv.effectiveMode())
	if cv.profile.Kind == profile.KindACP {
		model, mode = agents.StatusLines(cv.sess, cv.row.Model, cv.row.PermissionMode)
	}
	return fmt.Sprintf("📊 Session %s\n• agent: %s · profile %s\n• queue: %d waiting, %d sent and unfinished\n• pending approvals: %d\n• model: %s · mode: %s",
		render.CodeSpan(textcut.OrBlank(cv.row.SessionID, "none yet")), state, render.CodeSpan(cv.profile.Name), cv.q.Len(), len(cv.inflight), cv.cards.Len(),
		model, mode) + agents.SpareStatusLine(cv.core.pool, cv.profile) + cv.limitsStatusLine() + cv.backgroundStatusLine()
}

func (cv *conversation) effectiveModel() string {
	if cv.row.Model != "" {
		return cv.row.Model
	}
	return cv.profile.Model
}

// effectiveMode is the permission mode the agent runs in: the
// conversation's override, else the profile's. bypassPermissions, from
// either, counts only while the profile allows it (bypassAllowed).
func (cv *conversation) effectiveMode() string {
	if m := cv.row.PermissionMode; m != "" && (m != profile.ModeBypass || cv.bypassAllowed()) {
		return m
	}
	return cv.profileMode()
}

// profileMode is the profile's permission mode; a bypassPermissions the
// profile does not allow (which check-config refuses) falls back to default.
func (cv *conversation) profileMode() string { return agents.PermissionMode(cv.profile) }

// Agents lists the profiles the conversation may run on — its own, the
// bot's default, then its bots[].agents (agentChoices) — and the one it
// runs now.
func (c Conv) Agents() (names []string, current string) {
	return agentChoices(c.cv.core.cfg(), c.cv.bot, c.cv.row), c.cv.profile.Name
}

// SwitchAgent moves the conversation to profile name (!agent NAME), one
// of Agents, only while the agent is idle: it stops the agent, stores the
// profile with a fresh session id (the model and mode overrides are
// cleared, the conversation's grants removed by by) and the next turn
// starts there, fresh. It returns more to tell ("" for nothing): the
// grants removed, what became of the old session's worktree.
// ErrStarting, ErrResuming or ErrWorking while the agent is starting, a
// resume is under way or the agent is working (a turn, a message in
// flight, an open card, a background task); other errors are the store's.
func (c Conv) SwitchAgent(ctx context.Context, name, by string) (string, error) {
	cv := c.cv
	switch {
	case cv.resuming:
		return "", ErrResuming
	case cv.acquiring:
		return "", ErrStarting
	case cv.busyWithTurn() || sessionBusy(cv.sess):
		return "", ErrWorking
	}
	p := cv.core.cfg().Agents[name]
	if p == nil || !slices.Contains(agentChoices(cv.core.cfg(), cv.bot, cv.row), name) {
		return "", fmt.Errorf("switch agent: profile %q is not one of bot %s's", name, cv.bot.Name)
	}
	wt, err := cv.moveToProfile(ctx, p, by, "⌛ Expired: the conversation moved to agent "+name+".")
	if err == nil {
		cv.log.Info("conversation moved to another agent profile", "agent", name, "user", by)
	}
	return wt, err
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

// agentChoices are the profiles a conversation of bot may run on, each
// once and configured: its own (baseProfile), the bot's default, then the
// bot's agents list.
func agentChoices(cfg *config.Config, bot *config.Bot, row store.Conversation) []string {
	var out []string
	if p := baseProfile(cfg, bot, row); p != nil {
		out = append(out, p.Name)
	}
	for _, n := range bot.Profiles() {
		if cfg.Agents[n] != nil && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// baseProfile is the profile of conversation row without !agent: the one
// it was created with (a scheduled run may name its own), else the bot's.
func baseProfile(cfg *config.Config, bot *config.Bot, row store.Conversation) *profile.Agent {
	if p := cfg.Agents[row.Agent]; p != nil {
		return p
	}
	return cfg.Agents[bot.Agent]
}

// convProfile is the profile conversation row runs on: the one !agent
// moved it to while the bot still lists it, else baseProfile; gone names
// a stored profile the bot no longer lists (the conversation goes back at
// its next message, revertAgent).
func convProfile(cfg *config.Config, bot *config.Bot, row store.Conversation) (p *profile.Agent, gone string) {
	if o := row.AgentOverride; o != "" {
		if slices.Contains(agentChoices(cfg, bot, row), o) {
			return cfg.Agents[o], ""
		}
		gone = o
	}
	return baseProfile(cfg, bot, row), gone
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
	gone, p := cv.agentGone, baseProfile(cv.core.cfg(), cv.bot, cv.row)
	if p == nil {
		return false // the conversation keeps the profile it has (conversationLocked refuses such a config)
	}
	wt, err := cv.moveToProfile(ctx, p, "config reload", "⌛ Expired: agent "+gone+" is no longer available.")
	if err != nil {
		if !cv.fenced(err) {
			cv.log.Error("move conversation back to its default profile; retrying", "agent", gone, "err", err)
			cv.after(time.Second, timerRetry, "")
		}
		return true
	}
	cv.log.Info("conversation moved back to its default profile", "agent", gone, "to", p.Name)
	text := agentGoneText(gone, p.Name)
	if wt != "" {
		text += "\n" + wt
	}
	cv.notice(ctx, text)
	return false
}

// AgentChoices is what the agent offers of kind ("mode" or "model") when
// it chooses its own (an agent of kind acp, whose offer is known while it
// runs; agents.Offered); Own is false for the Claude Code CLI.
func (c Conv) AgentChoices(kind string) agents.Choices {
	cv := c.cv
	if cv.profile.Kind != profile.KindACP {
		return agents.Choices{}
	}
	return agents.Offered(cv.sess, kind, cv.row.Model, cv.row.PermissionMode)
}

// agentGoneText is the notice that the conversation's profile gone is no
// longer one of the bot's (a reload) and it is back on profile def.
func agentGoneText(gone, def string) string {
	return "🔀 Agent " + render.CodeSpan(gone) + " is no longer available to this bot, so this conversation is back on " +
		render.CodeSpan(def) + ". It starts fresh: the agent does not see the earlier messages of this thread."
}

// connectionLines are !status's lines about connections: this bot's
// state and, for an admin, every other bot that is not connected or
// running (others do not learn the names of the bridge's other bots).
func (cv *conversation) connectionLines(who Person) string {
	var b strings.Builder
	now := cv.core.clock.Now()
	for _, s := range cv.core.BotStates() {
		switch {
		case s.Bot == cv.bot.Name:
			b.WriteString("\n• connection: " + render.StateSummary(s, now))
		case cv.bot.Access.IsAdmin(who.ID) && s.State != bridges.ConnConnected && s.State != bridges.ConnRunning:
			b.WriteString("\n• bot " + render.CodeSpan(s.Bot) + ": " + render.StateSummary(s, now))
		}
	}
	return b.String()
}

// backgroundStatusLine is !status's line about the agent's running
// background tasks ("" when there are none or no agent is live).
func (cv *conversation) backgroundStatusLine() string {
	bl, ok := cv.sess.(backgroundLister)
	if !ok {
		return ""
	}
	tasks := bl.BackgroundTasks()
	if len(tasks) == 0 {
		return ""
	}
	names := make([]string, 0, len(tasks))
	for _, t := range tasks {
		names = append(names, render.CodeSpan(textcut.OneLine(textcut.OrBlank(t.Description, strings.TrimSpace(t.TaskType+" "+t.TaskID)), 80)))
	}
	return fmt.Sprintf("\n• background tasks: %d — %s", len(tasks), strings.Join(names, ", "))
}
