package commands

import (
	"context"
	"strings"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// An agent of kind acp chooses its own modes and models: !mode and !model
// list what it offers for its session and switch among those (runChoice),
// where the Claude Code CLI's are fixed (runMode, runModel).

// Choice is one mode or model an agent offers.
type Choice struct{ ID, Name, Description string }

// AgentChoices is what a conversation's agent offers of one kind (mode or
// model), for Conversation.AgentChoices.
type AgentChoices struct {
	// Own: the agent chooses its own (kind acp); false for the Claude
	// Code CLI, whose modes and models are fixed.
	Own bool
	// Live: the agent runs, so Current and Available are known (an empty
	// Available: it offers none).
	Live      bool
	Current   string
	Available []Choice
	// Stored is the conversation's choice, asked for at each start of the
	// agent ("" or "default" = the agent's own).
	Stored string
}

// has reports whether id is one of the offered choices.
func (a AgentChoices) has(id string) bool {
	for _, c := range a.Available {
		if c.ID == id {
			return true
		}
	}
	return false
}

// skipsApproval is the modes known to make an agent run every tool
// without asking (Gemini CLI's yolo, Codex's full-access, Claude Code's
// bypassPermissions): the bridge's rules and cards would no longer see
// what it runs, so !mode refuses them for an ACP agent (allow_bypass is
// Claude Code's).
var skipsApproval = map[string]bool{"yolo": true, "full-access": true, "bypasspermissions": true, "dontask": true}

// SkipsApproval reports whether mode is one that makes an agent run its
// tools without asking (refused for agents of kind acp).
func SkipsApproval(mode string) bool { return skipsApproval[strings.ToLower(mode)] }

// runChoice is !mode and !model (kind "mode" or "model") for an agent
// that offers its own: no argument lists them, NAME switches to one of
// them ("default": the agent's own), stored for the agent's next starts.
func runChoice(ctx context.Context, c Conversation, kind string, ch AgentChoices, l Line) {
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
	case id != "default" && !ch.has(id):
		c.Notice(ctx, "⛔ "+render.CodeSpan(id)+" is not one of this agent's "+kind+"s.\n"+choiceList(kind, ch))
		return
	case kind == "mode" && SkipsApproval(id):
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
func choiceList(kind string, ch AgentChoices) string {
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
