package commands

import (
	"context"

	"github.com/agentbridge/agentbridge/bridges/render"
)

// This file holds !handoff: what to run at a desk to continue the
// conversation's session there (docs/handoff.md).

// runHandoff tells who, privately where the platform can (Conversation.
// Privately), how to continue this conversation from a terminal: attach to
// the same live agent, or export its transcript for a plain `claude
// --resume`. The text holds no secret: the terminal signs in with the
// person's own handoff token.
func runHandoff(ctx context.Context, c Conversation, who Author, _ Line) {
	c.Privately(ctx, who, HandoffText(c.ID(), c.SessionID()))
}

// HandoffText is the !handoff answer for conversation convID whose agent
// session is sessionID ("" = none yet).
func HandoffText(convID, sessionID string) string {
	text := "🖥️ **Continue this conversation at a desk**\n" +
		"• Same agent, live (your messages and its answers show here too): `bridge attach " + convID + "`\n" +
		"• Or take a copy of the session to a project directory: `bridge export " + convID + " -dir DIR`, then `claude --resume` as it prints\n" +
		"Both need the bridge's address (`-config FILE` or `-url URL`) and your handoff token in " + render.CodeSpan("BRIDGE_HANDOFF_TOKEN") +
		" (config `handoff.users`; ask an admin)."
	if sessionID == "" {
		text += "\n_The agent has no session yet: write a first message here, or attach and write it there._"
	}
	return text
}
