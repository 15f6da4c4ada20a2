// Package commands holds the chat commands ("!help", "!stop", "!model", …):
// the one parser of a command line, the table where each command carries
// its name, usage, help, authority and handler, the help text, and the
// texts each command answers with. A command acts on the conversation it
// was written in through Conversation, which the core implements on the
// conversation's worker; this package never sees the core's internals.
//
// Commands run only for messages a person wrote (the core never parses a
// scheduled run or an agent's message as one), and who may run a command
// is decided from that person, never from the conversation's owner. An
// unknown command is refused (fail closed).
package commands

import (
	"context"
	"strings"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/access"
)

// command is one chat command. Commands run when the worker reaches them in
// the ledger; they are never sent to the agent.
type command struct {
	name  string
	usage string
	help  string
	who   Authority // who may run it
	// adminArg, when set, is a first argument word that makes the command
	// admin-only (e.g. "rm" for "!rules rm N").
	adminArg string
	// argWho, when set, is the authority the command needs when given an
	// argument (e.g. "!agent NAME" moves the conversation; "!agent" only
	// lists).
	argWho Authority
	// run carries the command out; the author's authority was checked.
	run func(ctx context.Context, c Conversation, who Author, l Line)
}

// Authority says who may run a command.
type Authority int

const (
	Anyone       Authority = iota // everyone allowed to talk to the bot
	Participants                  // the conversation's participants and admins
	Admins                        // the bot's admins; disabled when it has none
)

// table lists the chat commands in help order.
func table() []command {
	return []command{
		{name: "help", help: "show this help", run: runHelp},
		{name: "stop", help: "interrupt the running turn", who: Participants, run: runStop},
		{name: "new", help: "start a fresh session (the agent forgets this conversation)", who: Participants, run: runNew},
		{name: "agent", usage: "[NAME]", help: "list this bot's agent profiles; `NAME` moves this conversation to that profile, where it starts fresh (participants and admins)",
			argWho: Participants, run: runAgent},
		{name: "model", usage: "NAME|default", help: "switch the model for this conversation", who: Admins, run: runModel},
		{name: "mode", usage: "default|acceptEdits|plan", help: "set the permission mode for this conversation", who: Admins, run: runMode},
		{name: "rules", usage: "[rm N]", help: "list the policy rules and this conversation's grants; `rm N` removes grant N (admin)", adminArg: "rm",
			run: func(ctx context.Context, c Conversation, who Author, l Line) { c.Rules(ctx, l.Args, who) }},
		{name: "cost", help: "show the cost of this conversation and of the bot, and the budget you have left", run: runCost},
		{name: "status", help: "show the session, whether the agent is live, queue and pending approvals",
			run: func(ctx context.Context, c Conversation, who Author, _ Line) { c.Notice(ctx, c.Status(ctx, who)) }},
		{name: "sessions", help: "list this channel's sessions (ID, last activity, cost, first prompt)", run: runSessions},
		{name: "handoff", help: "tell me, privately, how to continue this conversation in a terminal", who: Participants, run: runHandoff},
		{name: "resume", usage: "ID", help: "continue an older session of this channel in this (new) thread", run: runResume},
		scheduleCommand(),
	}
}

// required is the authority running c as l needs.
func (c command) required(l Line) Authority {
	if c.adminArg != "" && strings.EqualFold(l.Arg(0), c.adminArg) {
		return Admins
	}
	if len(l.Args) > 0 && c.argWho > c.who {
		return c.argWho
	}
	return c.who
}

// lookup returns the command named name.
func lookup(name string) (command, bool) {
	for _, c := range table() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// Run executes command l, which who wrote (in ledger message msgID) in
// conversation c, if who may run it; otherwise it tells why not. It runs
// on the conversation's worker.
func Run(ctx context.Context, c Conversation, msgID string, who Author, l Line) {
	if refusal := refusal(ctx, c, msgID, who, l); refusal != "" {
		c.Log().Info("command refused", "command", l.Name, "user", who.ID)
		c.Notice(ctx, refusal)
		return
	}
	c.Log().Info("command", "command", l.Name, "args", l.Args, "user", who.ID)
	cmd, _ := lookup(l.Name)
	cmd.run(ctx, c, who, l)
}

// refusal returns why who (the author of ledger message msgID) may not run
// command l, or "" when they may: admin commands need an admin (and are
// disabled when the bot has none); participant commands need an admin or
// someone who wrote in this conversation before (see
// convstore.Store.IsParticipant). An unknown name is refused (fail closed).
func refusal(ctx context.Context, c Conversation, msgID string, who Author, l Line) string {
	cmd, ok := lookup(l.Name)
	if !ok {
		return "⛔ Unknown command."
	}
	shown := bridges.CommandPrefix + l.Name
	need := cmd.required(l)
	if cmd.adminArg != "" && need == Admins {
		shown += " " + cmd.adminArg
	}
	switch need {
	case Admins:
		if !c.Bot().Access.HasAdmins() {
			return "⛔ " + shown + " is disabled: this bot has no admins. Admins must be configured (access.admins) to use it."
		}
		if !c.Bot().Access.IsAdmin(who.ID) {
			return "⛔ " + shown + " is for admins only."
		}
	case Participants:
		// The access decision: who may write here now and takes part (a
		// web conversation's owner and participants by share; on a chat
		// channel who wrote here before this command, and the bot's admins).
		p := chatPerson(c, who)
		p.Except = msgID
		d, err := c.Access().Decide(ctx, p, access.Conv{ID: c.ID(), Key: c.Key()}, access.Write)
		if err != nil {
			c.Log().Error("check command authority", "command", l.Name, "err", err)
			return "⚠️ Could not check who may run " + shown + " (database error)."
		}
		if !d.Allowed || d.Role == access.Member {
			return "⛔ " + shown + " is for the people taking part in this conversation and admins."
		}
	}
	return ""
}

func runHelp(ctx context.Context, c Conversation, _ Author, _ Line) {
	var b strings.Builder
	b.WriteString("**Commands**\n")
	for _, cmd := range table() {
		b.WriteString("• `" + bridges.CommandPrefix + cmd.name)
		if cmd.usage != "" {
			b.WriteString(" " + cmd.usage)
		}
		b.WriteString("` — " + cmd.help)
		switch cmd.who {
		case Admins:
			b.WriteString(" _(admin)_")
		case Participants:
			b.WriteString(" _(participants and admins)_")
		}
		b.WriteString("\n")
	}
	if !c.Bot().Access.HasAdmins() {
		b.WriteString("_Admin commands are disabled because this bot has no admins: admins must be configured (access.admins) to use them._")
	} else {
		b.WriteString("_Admin commands are limited to the bot's admins._")
	}
	if c.Profile().AllowBypass {
		b.WriteString("\n_`" + bridges.CommandPrefix + "mode bypassPermissions` is allowed for this agent._")
	}
	c.Notice(ctx, b.String())
}
