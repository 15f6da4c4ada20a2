package render

import (
	"fmt"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// This file holds the texts about a conversation's agent session: its
// short id, !resume's and !agent's notices.

// ShortID is the part of a session id people see (and a worktree's
// branch is named after): its first 8 characters.
func ShortID(sessionID string) string {
	if len(sessionID) > 8 {
		return sessionID[:8]
	}
	return sessionID
}

// MovedAwayText tells the conversation that gave session sessionID up
// that who (Mention) continued it elsewhere.
func MovedAwayText(who, sessionID string) string {
	return fmt.Sprintf("↪️ %s continued this thread's session %s in another thread. A new message here starts a fresh session.",
		who, CodeSpan(ShortID(sessionID)))
}

// ResumedText tells the resuming conversation it now has session
// sessionID, whose first prompt was summary.
func ResumedText(sessionID, summary string) string {
	return fmt.Sprintf("↩️ Resumed session %s: “%s”. The agent remembers that conversation; carry on here.", CodeSpan(ShortID(sessionID)), textcut.OneLine(summary, 100))
}

// AgentGoneText is the notice that the conversation's profile gone is no
// longer one of the bot's (a reload) and it is back on profile def.
func AgentGoneText(gone, def string) string {
	return "🔀 Agent " + CodeSpan(gone) + " is no longer available to this bot, so this conversation is back on " +
		CodeSpan(def) + ". It starts fresh: the agent does not see the earlier messages of this thread."
}

// NoSuchSession reports the CLI's answer to --resume of a session it does
// not have (e.g. its HOME or workdir changed).
func NoSuchSession(r streamjson.Result) bool {
	return strings.Contains(r.Text+" "+strings.Join(r.Errors, " "), "No conversation found")
}

// Activity is what recording a ledger message of text as sent notes for
// !sessions (convstore.Store.MarkSent): the conversation's last activity,
// and its first prompt as the session's summary.
func Activity(text string) string {
	if strings.TrimSpace(text) == "" {
		return "(attachment)"
	}
	return text
}

// ResumeFailedText tells the resuming conversation why session sessionID
// could not be moved to it: its agent is working (busy), it moved
// meanwhile (moved), or err.
func ResumeFailedText(sessionID string, busy, moved bool, err error) string {
	switch {
	case busy:
		return "⛔ Session " + CodeSpan(ShortID(sessionID)) + " is live in another thread: its agent is working there. " +
			"Try again when it is done (or after `" + bridges.CommandPrefix + "stop` there)."
	case moved:
		return "Session " + CodeSpan(ShortID(sessionID)) + " moved meanwhile; `" + bridges.CommandPrefix + "sessions` shows where sessions are now."
	}
	return "⚠️ Could not resume session " + CodeSpan(ShortID(sessionID)) + ": " + textcut.OneLine(err.Error(), 200)
}
