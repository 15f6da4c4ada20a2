package worker

import (
	"context"
	"fmt"
	"slices"

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
// between two workers is in resume.go, the move to another profile in
// agents.go), the profiles a conversation may move to (!agent) and the
// agent's own modes and models (an ACP agent).

// ID is the store's id of the conversation.
func (c Conv) ID() string { return c.cv.id }

// Bot is the conversation's bot.
func (c Conv) Bot() *config.Bot { return c.cv.bot }

// Profile is the conversation's agent profile.
func (c Conv) Profile() *profile.Agent { return c.cv.profile }

// Store is the store, fenced to the worker's lease.
func (c Conv) Store() *store.Store { return c.cv.st }

// Model is the model the agent runs ("" = the CLI's default).
func (c Conv) Model() string { return agents.EffectiveModel(c.cv.profile, c.cv.row) }

// Mode is the permission mode the agent runs in.
func (c Conv) Mode() string { return agents.EffectiveMode(c.cv.profile, c.cv.row) }

// SessionID is the conversation's agent session id ("" = none yet).
func (c Conv) SessionID() string { return c.cv.row.SessionID }

// Access is the bridge's one access decision (CoreOptions.Access).
func (c Conv) Access() *access.Authority { return c.cv.opts.Access }

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
	return cv.statusText() + cv.hookStatusLines() + cv.outbox.StatusLine(ctx) + cv.worktreeStatus() + render.ConnectionLines(cv.host.BotStates(), cv.bot.Name, cv.bot.Access.IsAdmin(who.ID), cv.opts.Clock.Now())
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
	target := agents.EffectiveModel(cv.profile, cv.row)
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
	old := agents.EffectiveMode(cv.profile, cv.row)
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
	model, mode := render.CodeSpan(textcut.OrBlank(agents.EffectiveModel(cv.profile, cv.row), "default")), render.CodeSpan(agents.EffectiveMode(cv.profile, cv.row))
	if cv.profile.Kind == profile.KindACP {
		model, mode = agents.StatusLines(cv.sess, cv.row.Model, cv.row.PermissionMode)
	}
	return fmt.Sprintf("📊 Session %s\n• agent: %s · profile %s\n• queue: %d waiting, %d sent and unfinished\n• pending approvals: %d\n• model: %s · mode: %s",
		render.CodeSpan(textcut.OrBlank(cv.row.SessionID, "none yet")), state, render.CodeSpan(cv.profile.Name), cv.q.Len(), len(cv.inflight), cv.cards.Len(),
		model, mode) + agents.SpareStatusLine(cv.host.Pool(), cv.profile) + cv.host.Spawner().LimitsStatusLine(cv.profile.Resources) + agents.BackgroundStatusLine(cv.sess)
}

// Agents lists the profiles the conversation may run on — its own, the
// bot's default, then its bots[].agents (agents.ProfileChoices) — and the one it
// runs now.
func (c Conv) Agents() (names []string, current string) {
	return agents.ProfileChoices(c.cv.host.Config(), c.cv.bot, c.cv.row), c.cv.profile.Name
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
	case cv.busyWithTurn() || agents.Busy(cv.sess):
		return "", ErrWorking
	}
	p := cv.host.Config().Agents[name]
	if p == nil || !slices.Contains(agents.ProfileChoices(cv.host.Config(), cv.bot, cv.row), name) {
		return "", fmt.Errorf("switch agent: profile %q is not one of bot %s's", name, cv.bot.Name)
	}
	wt, err := cv.moveToProfile(ctx, p, by, "⌛ Expired: the conversation moved to agent "+name+".")
	if err == nil {
		cv.log.Info("conversation moved to another agent profile", "agent", name, "user", by)
	}
	return wt, err
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
