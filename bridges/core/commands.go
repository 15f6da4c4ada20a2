package core

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// command is one chat command. Commands run when the worker reaches them in
// the ledger; they are never sent to the agent.
type command struct {
	name  string
	usage string
	help  string
	who   authority // who may run it
	// adminArg, when set, is a first argument word that makes the command
	// admin-only (e.g. "rm" for "!rules rm N").
	adminArg string
}

// authority says who may run a command.
type authority int

const (
	anyone       authority = iota // everyone allowed to talk to the bot
	participants                  // the conversation's participants and admins
	admins                        // the bot's admins; disabled when it has none
)

// commands lists the chat commands in help order.
func commands() []command {
	return []command{
		{name: "help", help: "show this help"},
		{name: "stop", help: "interrupt the running turn", who: participants},
		{name: "new", help: "start a fresh session (the agent forgets this conversation)", who: participants},
		{name: "model", usage: "NAME|default", help: "switch the model for this conversation", who: admins},
		{name: "mode", usage: "default|acceptEdits|plan", help: "set the permission mode for this conversation", who: admins},
		{name: "rules", usage: "[rm N]", help: "list the policy rules and this conversation's grants; `rm N` removes grant N (admin)", adminArg: "rm"},
		{name: "cost", help: "show the cost of this conversation and of the bot, and the budget you have left"},
		{name: "status", help: "show the session, whether the agent is live, queue and pending approvals"},
		{name: "sessions", help: "list this channel's sessions (ID, last activity, cost, first prompt)"},
		{name: "resume", usage: "ID", help: "continue an older session of this channel in this (new) thread"},
		scheduleCommand(),
	}
}

// required is the authority running c as l needs.
func (c command) required(l cmdLine) authority {
	if c.adminArg != "" && strings.EqualFold(l.arg(0), c.adminArg) {
		return admins
	}
	return c.who
}

// lookupCommand returns the command named name.
func lookupCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// runCommand executes command l from ledger message m (a person's), if
// its author may run it.
func (cv *conversation) runCommand(ctx context.Context, m store.InboxMessage, l cmdLine) {
	who := author{m.UserID, m.UserName}
	if refusal := cv.commandRefusal(ctx, m, l); refusal != "" {
		cv.log.Info("command refused", "command", l.name, "user", who.id)
		cv.notice(ctx, refusal)
		return
	}
	cv.log.Info("command", "command", l.name, "args", l.args, "user", who.id)
	switch l.name {
	case "help":
		cv.notice(ctx, cv.helpText())
	case "stop":
		cv.cmdStop(ctx)
	case "new":
		cv.cmdNew(ctx, who)
	case "model":
		cv.cmdModel(ctx, l)
	case "mode":
		cv.cmdMode(ctx, l)
	case "rules":
		cv.cmdRules(ctx, l, who)
	case "cost":
		cv.cmdCost(ctx, who)
	case "status":
		cv.notice(ctx, cv.statusText()+cv.configStatusLine()+cv.outboxStatusLine(ctx)+cv.worktreeStatus()+cv.connectionLines(who))
	case "sessions":
		cv.cmdSessions(ctx)
	case "resume":
		cv.cmdResume(ctx, l, who)
	case "schedule":
		cv.cmdSchedule(ctx, m, l)
	}
}

// commandRefusal returns why the author of m may not run command l, or ""
// when they may: admin commands need an admin (and are disabled when the
// bot has none); participant commands need an admin or someone who wrote
// in this conversation before (see store.IsParticipant). An unknown name
// is refused (fail closed).
func (cv *conversation) commandRefusal(ctx context.Context, m store.InboxMessage, l cmdLine) string {
	c, ok := lookupCommand(l.name)
	if !ok {
		return "⛔ Unknown command."
	}
	shown := bridges.CommandPrefix + l.name
	need := c.required(l)
	if c.adminArg != "" && need == admins {
		shown += " " + c.adminArg
	}
	switch need {
	case admins:
		if !adminsConfigured(cv.bot) {
			return "⛔ " + shown + " is disabled: this bot has no admins. Admins must be configured (access.admins) to use it."
		}
		if !isAdmin(cv.bot, m.UserID) {
			return "⛔ " + shown + " is for admins only."
		}
	case participants:
		if isAdmin(cv.bot, m.UserID) {
			return ""
		}
		ok, err := cv.core.st.IsParticipant(ctx, cv.id, m.UserID, m.ID)
		if err != nil {
			cv.log.Error("check command authority", "command", l.name, "err", err)
			return "⚠️ Could not check who may run " + shown + " (database error)."
		}
		if !ok {
			return "⛔ " + shown + " is for the people taking part in this conversation and admins."
		}
	}
	return ""
}

func (cv *conversation) helpText() string {
	var b strings.Builder
	b.WriteString("**Commands**\n")
	for _, c := range commands() {
		b.WriteString("• `" + bridges.CommandPrefix + c.name)
		if c.usage != "" {
			b.WriteString(" " + c.usage)
		}
		b.WriteString("` — " + c.help)
		switch c.who {
		case admins:
			b.WriteString(" _(admin)_")
		case participants:
			b.WriteString(" _(participants and admins)_")
		}
		b.WriteString("\n")
	}
	if !adminsConfigured(cv.bot) {
		b.WriteString("_Admin commands are disabled because this bot has no admins: admins must be configured (access.admins) to use them._")
	} else {
		b.WriteString("_Admin commands are limited to the bot's admins._")
	}
	if cv.profile.AllowBypass {
		b.WriteString("\n_`" + bridges.CommandPrefix + "mode bypassPermissions` is allowed for this agent._")
	}
	return b.String()
}

func (cv *conversation) cmdStop(ctx context.Context) {
	if cv.sess == nil || (cv.turn == nil && len(cv.inflight) == 0) {
		cv.notice(ctx, "Nothing to stop.")
		return
	}
	if err := cv.sess.Interrupt(ctx); err != nil {
		cv.notice(ctx, "⚠️ Could not interrupt the agent: "+oneLine(err.Error(), 200))
		return
	}
	cv.stopping = true
}

func (cv *conversation) cmdNew(ctx context.Context, who author) {
	if cv.acquiring {
		cv.notice(ctx, "⏳ The agent is still starting; try "+bridges.CommandPrefix+"new again in a moment.")
		return
	}
	id, old := uuid.NewString(), cv.row.SessionID
	if err := cv.core.st.ResetSession(ctx, cv.id, id); err != nil {
		cv.log.Error("store new session id", "err", err)
		cv.notice(ctx, "⚠️ Could not start a fresh session (database error).")
		return
	}
	cv.closeSession(ctx, "⌛ Expired: a new session was started.")
	for _, sm := range cv.inflight {
		cv.finishInbox(ctx, sm.ledgerID, store.InboxCancelled, "!new by "+who.id)
	}
	clear(cv.inflight)
	cv.row.SessionID, cv.resume, cv.freshRetry = id, false, false
	text := "🆕 Started a fresh session. The agent no longer sees the earlier messages of this thread."
	if wt := cv.retireWorktree(ctx, old); wt != "" {
		text += "\n" + wt
	}
	cv.notice(ctx, text)
}

func (cv *conversation) cmdModel(ctx context.Context, l cmdLine) {
	model := l.arg(0)
	if len(l.args) != 1 || strings.ContainsRune(model, '`') {
		cv.notice(ctx, "Usage: `"+bridges.CommandPrefix+"model NAME` (or `"+bridges.CommandPrefix+"model default`). Current model: "+codeSpan(orDefault(cv.effectiveModel(), "the CLI's default")))
		return
	}
	if model == "default" {
		model = ""
	}
	if err := cv.core.st.SetModel(ctx, cv.id, model); err != nil {
		cv.log.Error("store model override", "err", err)
		cv.notice(ctx, "⚠️ Could not change the model (database error).")
		return
	}
	cv.row.Model = model
	shown := orDefault(cv.effectiveModel(), "the CLI's default")
	if cv.sess != nil {
		target := cv.effectiveModel()
		if target == "" {
			target = "default"
		}
		if err := cv.sess.SetModel(ctx, target); err != nil {
			cv.notice(ctx, "⚠️ Saved, but the running agent refused the model: "+oneLine(err.Error(), 200)+". It applies when the agent restarts.")
			return
		}
	}
	cv.notice(ctx, "🧠 Model set to "+codeSpan(shown)+".")
}

func (cv *conversation) cmdMode(ctx context.Context, l cmdLine) {
	mode := l.arg(0)
	if len(l.args) > 1 {
		mode = "" // usage
	}
	valid := map[string]bool{config.ModeDefault: true, config.ModeAcceptEdits: true, config.ModePlan: true,
		config.ModeBypass: cv.profile.AllowBypass}
	if !valid[mode] {
		msg := "Usage: `" + bridges.CommandPrefix + "mode default|acceptEdits|plan`"
		if mode == config.ModeBypass {
			msg = "⛔ bypassPermissions is not allowed for this agent (allow_bypass is off)."
		}
		cv.notice(ctx, msg+" Current mode: "+codeSpan(cv.effectiveMode()))
		return
	}
	old := cv.effectiveMode()
	if err := cv.core.st.SetPermissionMode(ctx, cv.id, mode); err != nil {
		cv.log.Error("store permission mode override", "err", err)
		cv.notice(ctx, "⚠️ Could not change the mode (database error).")
		return
	}
	cv.row.PermissionMode = mode
	switch {
	case cv.sess == nil:
	case mode == config.ModeBypass || old == config.ModeBypass:
		// The CLI only enters or leaves bypass at launch: restart it.
		if cv.turn != nil || len(cv.inflight) > 0 || len(cv.cards) > 0 {
			cv.restartAfterTurn = true
			cv.notice(ctx, "🔐 Mode set to "+codeSpan(mode)+"; it applies when the current turn ends (the agent restarts).")
			return
		}
		cv.restartProcess(ctx)
	default:
		if err := cv.sess.SetPermissionMode(ctx, mode); err != nil {
			cv.notice(ctx, "⚠️ Saved, but the running agent refused the mode: "+oneLine(err.Error(), 200)+". It applies when the agent restarts.")
			return
		}
	}
	cv.notice(ctx, "🔐 Mode set to "+codeSpan(mode)+".")
}

func (cv *conversation) cmdCost(ctx context.Context, who author) {
	conv, err := cv.core.st.UsageTotals(ctx, cv.id)
	if err != nil {
		cv.log.Error("usage totals", "err", err)
		cv.notice(ctx, "⚠️ Could not read the usage (database error).")
		return
	}
	bot, err := cv.core.st.BotUsageTotals(ctx, cv.bot.Name)
	if err != nil {
		cv.log.Error("bot usage totals", "err", err)
		cv.notice(ctx, "⚠️ Could not read the usage (database error).")
		return
	}
	text := fmt.Sprintf("💰 This conversation: %s\n💰 Bot %s: %s", totalsLine(conv), codeSpan(cv.bot.Name), totalsLine(bot))
	switch budget, err := cv.budgetLines(ctx, who.id); {
	case err != nil:
		cv.log.Error("budget left", "err", err)
		text += "\n⚠️ Could not read the budget left (database error)."
	case budget != "":
		text += "\n" + budget
	}
	cv.notice(ctx, text)
}

func totalsLine(t store.Totals) string {
	return fmt.Sprintf("$%.4f over %d turns (%s in, %s out tokens, %s)", t.CostUSD, t.Count,
		compactCount(t.InputTokens+t.CacheReadTokens+t.CacheCreationTokens), compactCount(t.OutputTokens),
		formatDuration(time.Duration(t.DurationMS)*time.Millisecond))
}

func compactCount(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	default:
		return fmt.Sprint(n)
	}
}

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
	return fmt.Sprintf("📊 Session %s\n• agent: %s\n• queue: %d waiting, %d sent and unfinished\n• pending approvals: %d\n• model: %s · mode: %s",
		codeSpan(orDefault(cv.row.SessionID, "none yet")), state, cv.q.Len(), len(cv.inflight), len(cv.cards),
		codeSpan(orDefault(cv.effectiveModel(), "default")), codeSpan(cv.effectiveMode())) + cv.spareStatusLine() + cv.limitsStatusLine()
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
	if m := cv.row.PermissionMode; m != "" && (m != config.ModeBypass || cv.bypassAllowed()) {
		return m
	}
	return cv.profileMode()
}

// profileMode is the profile's permission mode; a bypassPermissions the
// profile does not allow (which check-config refuses) falls back to default.
func (cv *conversation) profileMode() string { return profilePermissionMode(cv.profile) }
