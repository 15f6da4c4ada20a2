package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/agent/acp"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/access"
	"github.com/agentbridge/agentbridge/bridges/commands"
	"github.com/agentbridge/agentbridge/bridges/ownership"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/config/profile"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/queue"
	"github.com/agentbridge/agentbridge/store"
)

// This file is the core's side of the chat commands (bridges/commands):
// cmdConv, the commands.Conversation a command acts through, and the
// exchange between two workers that moves a session for !resume.

// cmdLine is the argument words of a command, as cmdRules reads them.
type cmdLine struct{ args []string }

// runCommand runs command l of ledger message m (a person's): the
// commands package checks the author's authority and runs it.
func (cv *conversation) runCommand(ctx context.Context, m store.InboxMessage, l commands.Line) {
	cv.core.commands.Run(ctx, cmdConv{cv}, m.ID, commands.Author{ID: m.UserID, Name: m.UserName}, l)
}

// cmdConv is a conversation as its commands see it; its methods run on
// the conversation's worker.
type cmdConv struct{ cv *conversation }

var _ commands.Conversation = cmdConv{}

func (c cmdConv) Key() bridges.ConversationKey         { return c.cv.key }
func (c cmdConv) ID() string                           { return c.cv.id }
func (c cmdConv) Bot() *config.Bot                     { return c.cv.bot }
func (c cmdConv) Profile() *profile.Agent              { return c.cv.profile }
func (c cmdConv) Store() commands.Store                { return c.cv.st }
func (c cmdConv) Now() time.Time                       { return c.cv.core.clock.Now() }
func (c cmdConv) Log() *slog.Logger                    { return c.cv.log }
func (c cmdConv) Notice(ctx context.Context, t string) { c.cv.notice(ctx, t) }
func (c cmdConv) Model() string                        { return c.cv.effectiveModel() }
func (c cmdConv) Mode() string                         { return c.cv.effectiveMode() }
func (c cmdConv) SessionID() string                    { return c.cv.row.SessionID }
func (c cmdConv) Access() *access.Authority            { return c.cv.core.opts.Access }

// Privately implements commands.Conversation: an ephemeral message where
// the platform has one, else a notice naming who.
func (c cmdConv) Privately(ctx context.Context, who commands.Author, text string) {
	if eph, ok := c.cv.platform.(bridges.Ephemeral); ok {
		err := eph.PostEphemeral(ctx, c.cv.key, who.ID, text)
		if err == nil {
			return
		}
		c.cv.log.Warn("private answer failed; posting it in the conversation", "err", err)
	}
	c.cv.notice(ctx, render.Mention(who.Name, who.ID)+" "+text)
}

func (c cmdConv) Rules(ctx context.Context, args []string, who commands.Author) {
	c.cv.cmdRules(ctx, cmdLine{args}, author{who.ID, who.Name})
}

func (c cmdConv) Status(ctx context.Context, who commands.Author) string {
	cv := c.cv
	return cv.statusText() + cv.hookStatusLines() + cv.outbox.StatusLine(ctx) + cv.worktreeStatus() + cv.connectionLines(author{who.ID, who.Name})
}

func (c cmdConv) BudgetLeft(ctx context.Context, user string) (string, error) {
	return c.cv.budgetLines(ctx, user)
}

func (c cmdConv) Stop(ctx context.Context) (bool, error) {
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

func (c cmdConv) NewSession(ctx context.Context, by string) (string, error) {
	cv := c.cv
	if cv.acquiring {
		return "", commands.ErrStarting
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

func (c cmdConv) SetModel(ctx context.Context, model string) (live, err error) {
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

func (c cmdConv) SetMode(ctx context.Context, mode string) (later bool, live, err error) {
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

func (c cmdConv) ResumeState() error {
	cv := c.cv
	switch {
	case cv.resuming:
		return commands.ErrResuming
	case cv.acquiring || cv.turn != nil || len(cv.inflight) > 0 || cv.cards.Len() > 0:
		return commands.ErrWorking
	}
	return nil
}

// Resume asks the worker of target's conversation to give its session up
// (releaseSession); the answer comes back as an inCall to adoptSession.
// Until then this conversation sends nothing to the agent.
func (c cmdConv) Resume(ctx context.Context, target store.SessionInfo, by commands.Author) error {
	cv := c.cv
	sessionID, to, who := target.SessionID, cv.row, author{by.ID, by.Name}
	err := cv.core.onWorker(target.Conversation, func(ctx context.Context, old *conversation) {
		summary, err := old.releaseSession(ctx, sessionID, to, who)
		old.core.replyTo(to, func(ctx context.Context, cv *conversation) { cv.adoptSession(ctx, sessionID, summary, err) })
	})
	if errors.Is(err, ownership.ErrHeldElsewhere) { // another replica runs it (resume_remote.go)
		if asked, rerr := cv.resumeRemote(ctx, target, who); asked {
			err = rerr
		}
	}
	if err != nil {
		return err
	}
	cv.resuming = true
	return nil
}

// inCall runs f on a conversation's worker: how one conversation asks
// another to do something with its own state.
type inCall struct {
	f func(ctx context.Context, cv *conversation)
}

func (inCall) isInput() {}

// releaseSession runs on the worker of the conversation that holds session
// sessionID: unless its agent is working (a turn, a message in flight, an
// open card, a background task, or it is starting), it stops the idle
// process and moves the session, with its summary, to conversation to; it
// keeps a fresh session itself. It returns the session's summary.
func (cv *conversation) releaseSession(ctx context.Context, sessionID string, to store.Conversation, who author) (string, error) {
	if cv.row.SessionID != sessionID {
		return "", store.ErrSessionMoved
	}
	if cv.acquiring || cv.turn != nil || len(cv.inflight) > 0 || cv.cards.Len() > 0 || sessionBusy(cv.sess) {
		return "", commands.ErrSessionBusy
	}
	summary, err := cv.st.SessionSummary(ctx, cv.id)
	if err != nil {
		return "", err
	}
	cv.closeSession(ctx, "⌛ Expired: the session moved to another thread.")
	fresh := uuid.NewString()
	if err := cv.st.MoveSession(ctx, cv.id, to.ID, sessionID, fresh); err != nil {
		return "", err
	}
	cv.row.SessionID, cv.resume, cv.freshRetry = fresh, false, false
	cv.log.Info("session moved to another conversation", "session", sessionID, "to", to.Key, "user", who.id)
	cv.notice(ctx, commands.MovedAwayText(commands.Author{ID: who.id, Name: who.name}, sessionID))
	return summary, nil
}

// sessionBusy reports whether a live session has a background task or a
// turn the core does not see, when the session can tell (agent.Session).
func sessionBusy(s AgentSession) bool {
	b, ok := s.(interface{ Busy() bool })
	return ok && b.Busy()
}

// adoptSession runs on the resuming conversation's worker with the answer
// of releaseSession: on success the conversation now has session
// sessionID (the store already says so) and its next spawn resumes it.
func (cv *conversation) adoptSession(ctx context.Context, sessionID, summary string, err error) {
	cv.resuming = false
	defer cv.deliverPending(ctx) // messages written meanwhile waited
	if err != nil {
		if !errors.Is(err, commands.ErrSessionBusy) && !errors.Is(err, store.ErrSessionMoved) {
			cv.log.Error("resume session", "session", sessionID, "err", err)
		}
		cv.notice(ctx, commands.ResumeFailedText(sessionID, err))
		return
	}
	old := cv.row.SessionID
	cv.closeSession(ctx, "⌛ Expired: this thread resumed another session.")
	cv.row.SessionID, cv.resume, cv.freshRetry = sessionID, true, false
	text := commands.ResumedText(sessionID, summary)
	if wt := cv.retireWorktree(ctx, old); wt != "" {
		text += "\n" + wt
	}
	cv.notice(ctx, text)
}

// onWorker runs f on the worker of conversation conv, starting one if
// needed. It does not wait; it fails when that worker's queue is full or
// the core stops.
func (c *Core) onWorker(conv store.Conversation, f func(context.Context, *conversation)) error {
	_, err := c.deliver(conv, inCall{f})
	return err
}

// replyTo runs f on the worker of conversation conv from a goroutine of
// the core, waiting for room in its queue: an answer to a request conv
// made, which must not be lost to a full queue.
func (c *Core) replyTo(conv store.Conversation, f func(context.Context, *conversation)) {
	runCtx := c.runCtx
	c.workers.Go(func() {
		cv, err := c.deliver(conv, inCall{f})
		if errors.Is(err, queue.ErrFull) && cv != nil {
			err = cv.q.PushWait(runCtx, inCall{f})
		}
		if err != nil && runCtx.Err() == nil {
			c.log.Warn("answer to another conversation lost", "key", conv.Key, "err", err)
		}
	})
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
		model, mode = acpChoiceStatus(cmdConv{cv}.AgentChoices(acp.KindModel)), acpChoiceStatus(cmdConv{cv}.AgentChoices(acp.KindMode))
	}
	return fmt.Sprintf("📊 Session %s\n• agent: %s · profile %s\n• queue: %d waiting, %d sent and unfinished\n• pending approvals: %d\n• model: %s · mode: %s",
		render.CodeSpan(textcut.OrBlank(cv.row.SessionID, "none yet")), state, render.CodeSpan(cv.profile.Name), cv.q.Len(), len(cv.inflight), cv.cards.Len(),
		model, mode) + cv.spareStatusLine() + cv.limitsStatusLine() + cv.backgroundStatusLine()
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
func (cv *conversation) profileMode() string { return profilePermissionMode(cv.profile) }

func (c cmdConv) Agents() ([]string, string) {
	return agentChoices(c.cv.core.cfg(), c.cv.bot, c.cv.row), c.cv.profile.Name
}

// SwitchAgent implements commands.Conversation (!agent NAME): only to a
// profile agentChoices lists, and only while the agent is idle.
func (c cmdConv) SwitchAgent(ctx context.Context, name, by string) (string, error) {
	cv := c.cv
	switch {
	case cv.resuming:
		return "", commands.ErrResuming
	case cv.acquiring:
		return "", commands.ErrStarting
	case cv.busyWithTurn() || sessionBusy(cv.sess):
		return "", commands.ErrWorking
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
	text := commands.AgentGoneText(gone, p.Name)
	if wt != "" {
		text += "\n" + wt
	}
	cv.notice(ctx, text)
	return false
}

// offerer is an agent session that chooses its own modes and models (an
// ACP agent, *agent.Session): what it offers for its session.
type offerer interface {
	Offered(kind string) (o acp.Offer, initial string, ok bool)
}

// AgentChoices implements commands.Conversation: an agent of kind acp
// offers its own modes and models, known while it runs.
func (c cmdConv) AgentChoices(kind string) commands.AgentChoices {
	cv := c.cv
	if cv.profile.Kind != profile.KindACP {
		return commands.AgentChoices{}
	}
	ch := commands.AgentChoices{Own: true, Stored: cv.row.Model}
	if kind == acp.KindMode {
		ch.Stored = cv.row.PermissionMode
	}
	o, ok := cv.sess.(offerer)
	if cv.sess == nil || !ok {
		return ch
	}
	offer, _, isACP := o.Offered(kind)
	if !isACP {
		return ch
	}
	ch.Live, ch.Current = true, offer.Current
	for _, a := range offer.Available {
		ch.Available = append(ch.Available, commands.Choice{ID: a.ID, Name: a.Name, Description: a.Description})
	}
	return ch
}

// acpStoredMode is the stored mode an ACP agent is asked for at its
// start: none for "default" (the agent's own) and none for a mode that
// makes the agent stop asking (commands refuse to store one).
func acpStoredMode(m string) string {
	if m == profile.ModeDefault || commands.SkipsApproval(m) {
		return ""
	}
	return m
}

// acpChoiceStatus is !status's model or mode of an ACP agent: the running
// agent's current one, else the conversation's choice, else the agent's
// own.
func acpChoiceStatus(ch commands.AgentChoices) string {
	switch {
	case ch.Live && ch.Current != "":
		return render.CodeSpan(ch.Current)
	case ch.Live:
		return "none offered"
	case ch.Stored != "" && ch.Stored != profile.ModeDefault:
		return render.CodeSpan(ch.Stored)
	}
	return "the agent's own"
}
