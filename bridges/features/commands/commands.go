// Package commands holds the chat commands ("!help", "!stop", "!model", …):
// the one parser of a command line, the table where each command carries
// its name, usage, help, authority and handler (the built-in ones, then
// those a feature registers, e.g. bridges/features/schedule's "!schedule"), the
// help text, and the texts each built-in command answers with. It sits
// above the core: the Table is the core's Commands (CoreOptions.Commands,
// set by the composition root), and a command acts on the conversation it
// was written in through Conversation, which the core's conversation
// handle worker.Conv implements on the conversation's worker.
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
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
)

// Command is one chat command: a built-in one of this package, or one a
// feature registers (NewTable, e.g. bridges/features/schedule's !schedule).
// Commands run when the worker reaches them in the ledger; they are never
// sent to the agent.
type Command struct {
	Name  string // lower case, without the prefix
	Usage string // the arguments as !help shows them ("" for none)
	Help  string
	Who   Authority // who may run it
	// AdminArg, when set, is a first argument word that makes the command
	// admin-only (e.g. "rm" for "!rules rm N").
	AdminArg string
	// ArgWho, when set, is the authority the command needs when given an
	// argument (e.g. "!agent NAME" moves the conversation; "!agent" only
	// lists).
	ArgWho Authority
	// Run carries the command out; the author's authority was checked.
	Run func(ctx context.Context, c Conversation, who worker.Person, l Line)
}

// Authority says who may run a command.
type Authority int

const (
	Anyone       Authority = iota // everyone allowed to talk to the bot
	Participants                  // the conversation's participants and admins
	Admins                        // the bot's admins; disabled when it has none
)

// builtins lists the built-in chat commands in help order.
func builtins() []Command {
	return []Command{
		{Name: "help", Help: "show this help"}, // Run: the table's runHelp
		{Name: "stop", Help: "interrupt the running turn", Who: Participants, Run: runStop},
		{Name: "new", Help: "start a fresh session (the agent forgets this conversation)", Who: Participants, Run: runNew},
		{Name: "agent", Usage: "[NAME]", Help: "list this bot's agent profiles; `NAME` moves this conversation to that profile, where it starts fresh (participants and admins)",
			ArgWho: Participants, Run: runAgent},
		{Name: "model", Usage: "NAME|default", Help: "switch the model for this conversation", Who: Admins, Run: runModel},
		{Name: "mode", Usage: "default|acceptEdits|plan", Help: "set the permission mode for this conversation", Who: Admins, Run: runMode},
		{Name: "rules", Usage: "[rm N]", Help: "list the policy rules and this conversation's grants; `rm N` removes grant N (admin)", AdminArg: "rm",
			Run: func(ctx context.Context, c Conversation, who worker.Person, l Line) { c.Rules(ctx, l.Args, who) }},
		{Name: "cost", Help: "show the cost of this conversation and of the bot, and the budget you have left", Run: runCost},
		{Name: "status", Help: "show the session, whether the agent is live, queue and pending approvals",
			Run: func(ctx context.Context, c Conversation, who worker.Person, _ Line) {
				c.Notice(ctx, c.Status(ctx, who))
			}},
		{Name: "sessions", Help: "list this channel's sessions (ID, last activity, cost, first prompt)", Run: runSessions},
		{Name: "resume", Usage: "ID", Help: "continue an older session of this channel in this (new) thread", Run: runResume},
	}
}

// Table is the chat commands of a bridge: the built-in ones, then the ones
// features registered, in help order. It is read-only once made.
type Table struct{ cmds []Command }

// NewTable is the built-in commands followed by extra (a feature's), in
// that order; an extra command never replaces a built-in one of the same
// name (the first of a name wins).
func NewTable(extra ...Command) *Table {
	t := &Table{}
	t.cmds = append(builtins(), extra...)
	t.cmds[0].Run = t.runHelp
	return t
}

// required is the authority running c as l needs.
func (c Command) required(l Line) Authority {
	if c.AdminArg != "" && strings.EqualFold(l.Arg(0), c.AdminArg) {
		return Admins
	}
	if len(l.Args) > 0 && c.ArgWho > c.Who {
		return c.ArgWho
	}
	return c.Who
}

// lookup returns the command named name.
func (t *Table) lookup(name string) (Command, bool) {
	for _, c := range t.cmds {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

var _ worker.Commands = (*Table)(nil)

// Handle implements worker.Commands: text, which who wrote in ledger message
// msgID of conversation c, is run as a command if it is one (Parse, Run);
// one written with characters a command may not contain is refused
// (CharsRefusal), neither run nor passed to the agent.
func (t *Table) Handle(ctx context.Context, c worker.Conv, msgID string, who worker.Person, text string) bool {
	l, p := t.Parse(text)
	switch p {
	case OK:
		t.Run(ctx, c, msgID, who, l)
		return true
	case Refused:
		c.Log().Info("command refused: unusual characters", "command", l.Name, "user", who.ID)
		c.Notice(ctx, CharsRefusal)
		return true
	}
	return false
}

// Run executes command l, which who wrote (in ledger message msgID) in
// conversation c, if who may run it; otherwise it tells why not. It runs
// on the conversation's worker.
func (t *Table) Run(ctx context.Context, c Conversation, msgID string, who worker.Person, l Line) {
	if refusal := t.refusal(ctx, c, msgID, who, l); refusal != "" {
		c.Log().Info("command refused", "command", l.Name, "user", who.ID)
		c.Notice(ctx, refusal)
		return
	}
	c.Log().Info("command", "command", l.Name, "args", l.Args, "user", who.ID)
	cmd, _ := t.lookup(l.Name)
	cmd.Run(ctx, c, who, l)
}

// refusal returns why who (the author of ledger message msgID) may not run
// command l, or "" when they may: admin commands need an admin (and are
// disabled when the bot has none); participant commands need an admin or
// someone who wrote in this conversation before (see
// convstore.Store.IsParticipant). An unknown name is refused (fail closed).
func (t *Table) refusal(ctx context.Context, c Conversation, msgID string, who worker.Person, l Line) string {
	cmd, ok := t.lookup(l.Name)
	if !ok {
		return "⛔ Unknown command."
	}
	shown := bridges.CommandPrefix + l.Name
	need := cmd.required(l)
	if cmd.AdminArg != "" && need == Admins {
		shown += " " + cmd.AdminArg
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

func (t *Table) runHelp(ctx context.Context, c Conversation, _ worker.Person, _ Line) {
	var b strings.Builder
	b.WriteString("**Commands**\n")
	for _, cmd := range t.cmds {
		b.WriteString("• `" + bridges.CommandPrefix + cmd.Name)
		if cmd.Usage != "" {
			b.WriteString(" " + cmd.Usage)
		}
		b.WriteString("` — " + cmd.Help)
		switch cmd.Who {
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
