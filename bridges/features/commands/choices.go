package commands

import (
	"context"
	"strings"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// An agent of kind acp chooses its own modes and models: !mode and !model
// list what it offers for its session and switch among those (runChoice),
// where the Claude Code CLI's are fixed (runMode, runModel).

// offers reports whether id is one of the choices ch offers.
func offers(ch agents.Choices, id string) bool {
	for _, c := range ch.Available {
		if c.ID == id {
			return true
		}
	}
	return false
}

// runChoice is !mode and !model (kind "mode" or "model") for an agent
// that offers its own: no argument lists them, NAME switches to one of
// them ("default": the agent's own), stored for the agent's next starts.
func runChoice(ctx context.Context, c Conversation, kind string, ch agents.Choices, l Line) {
	cmd := "`" + bridges.CommandPrefix + kind + " NAME`"
	id := l.Arg(0)
	switch {
	case !ch.Live:
		msg := "The agent says which " + kind + "s it offers once it runs: send a message first, then " + cmd + "."
		if ch.Stored != "" {
			msg += " This conversation asks for " + render.CodeSpan(ch.Stored) + "."
		}
		c.Notice(ctx, msg)
		return
	case len(ch.Available) == 0:
		c.Notice(ctx, "This agent (kind acp) offers no "+kind+" to choose: it did not advertise any for its session.")
		return
	case len(l.Args) != 1 || strings.ContainsRune(id, '`'):
		c.Notice(ctx, choiceList(kind, ch)+"\nUsage: "+cmd+" (or `"+bridges.CommandPrefix+kind+" default` for the agent's own).")
		return
	case id != "default" && !offers(ch, id):
		c.Notice(ctx, "⛔ "+render.CodeSpan(id)+" is not one of this agent's "+kind+"s.\n"+choiceList(kind, ch))
		return
	case kind == "mode" && agents.SkipsApproval(id):
		c.Notice(ctx, "⛔ "+render.CodeSpan(id)+" makes the agent run its tools without asking, past the bridge's rules and approval cards: not allowed here.")
		return
	}
	var live, err error
	if kind == "mode" {
		_, live, err = c.SetMode(ctx, id)
	} else {
		stored := id
		if id == "default" {
			stored = ""
		}
		live, err = c.SetModel(ctx, stored)
	}
	switch {
	case err != nil:
		c.Log().Error("change "+kind, "err", err)
		c.Notice(ctx, "⚠️ Could not change the "+kind+" (database error).")
	case live != nil:
		c.Notice(ctx, "⚠️ Saved, but the running agent refused the "+kind+": "+textcut.OneLine(live.Error(), 200)+". It is asked for again when the agent restarts.")
	case kind == "mode":
		c.Notice(ctx, "🔐 Mode set to "+render.CodeSpan(id)+".")
	default:
		c.Notice(ctx, "🧠 Model set to "+render.CodeSpan(id)+".")
	}
}

// choiceList is the offered choices, the current one marked.
func choiceList(kind string, ch agents.Choices) string {
	var b strings.Builder
	b.WriteString("The agent's " + kind + "s (▶ current):")
	for _, o := range ch.Available {
		mark := "•"
		if o.ID == ch.Current {
			mark = "▶"
		}
		b.WriteString("\n" + mark + " " + render.CodeSpan(o.ID))
		if o.Name != "" && o.Name != o.ID {
			b.WriteString(" " + textcut.OneLine(o.Name, 60))
		}
		if o.Description != "" {
			b.WriteString(" — " + textcut.OneLine(o.Description, 120))
		}
	}
	return b.String()
}
