package handoff

import (
	"context"

	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/bridges/features/commands"
	"github.com/agentbridge/agentbridge/config/profile"
)

// This file holds !handoff, the chat command the hand-off registers with
// the core (core.CoreOptions.Commands): what to run at a desk to continue
// the conversation's session there (docs/handoff.md).

// Command is !handoff: it tells its author, privately where the platform
// can (commands.Conversation.Privately), how to continue this
// conversation from a terminal: attach to the same live agent, or export
// its transcript for a plain `claude --resume`. The text holds no secret:
// the terminal signs in with the person's own handoff token. Participants
// and admins may run it.
func Command() commands.Command {
	return commands.Command{Name: "handoff", Help: "tell me, privately, how to continue this conversation in a terminal",
		Who: commands.Participants, Run: func(ctx context.Context, c commands.Conversation, who worker.Person, _ commands.Line) {
			p := c.Profile()
			c.Privately(ctx, who, Text(c.ID(), c.SessionID(), p != nil && p.Kind == profile.KindACP))
		}}
}

// Text is the !handoff answer for conversation convID whose agent session
// is sessionID ("" = none yet); acp says its agent is of kind acp, whose
// session `bridge export` does not take (transfer.go: acpProfile).
func Text(convID, sessionID string, acp bool) string {
	text := "🖥️ **Continue this conversation at a desk**\n" +
		"• Same agent, live (your messages and its answers show here too): `bridge attach " + convID + "`\n"
	need := "Both need"
	if acp {
		text += "• `bridge export` is not available here: this conversation's agent is of kind acp, whose session `claude --resume` cannot read\n"
		need = "Attaching needs"
	} else {
		text += "• Or take a copy of the session to a project directory: `bridge export " + convID + " -dir DIR`, then `claude --resume` as it prints\n"
	}
	text += need + " the bridge's address (`-config FILE` or `-url URL`) and your handoff token in " + render.CodeSpan("BRIDGE_HANDOFF_TOKEN") +
		" (config `handoff.users`; ask an admin)."
	if sessionID == "" {
		text += "\n_The agent has no session yet: write a first message here, or attach and write it there._"
	}
	return text
}
