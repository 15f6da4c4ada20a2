package commands

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/access"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds !sessions and !resume. A session is the agent's memory
// of a conversation (the CLI's session id and its private state, plus its
// worktree): !resume moves one from the conversation that holds it to the
// one the command is written in, through the worker of each (the core's
// Resume) — the old conversation's worker gives it up (it alone knows
// whether its agent is working), then the new one takes it.

// maxSessionsListed caps !sessions.
const maxSessionsListed = 15

// runSessions lists the conversations of this channel (in a DM: of this
// DM) with their session id, last activity, cost and first prompt: those
// whose session the author may resume (the access decision, asked of each
// conversation: in the web console's channel of one person, only its
// owner's, never to the people a conversation of it is shared with).
func runSessions(ctx context.Context, c Conversation, who worker.Person, _ Line) {
	all, err := c.Store().ListSessions(ctx, c.Bot().Name, c.Key().Channel, maxSessionsListed)
	if err != nil {
		c.Log().Error("list sessions", "err", err)
		c.Notice(ctx, "⚠️ Could not list the sessions (database error).")
		return
	}
	var list []store.SessionInfo
	for _, s := range all {
		if c.Access().May(ctx, chatPerson(c, who), access.Conv{ID: s.ID, Key: bridges.ConversationKey(s.Key)}, access.Resume) {
			list = append(list, s)
		}
	}
	if len(list) == 0 {
		c.Notice(ctx, "🗂 No sessions here yet: a conversation has a session once the agent got a message.")
		return
	}
	now := c.Now()
	var b strings.Builder
	b.WriteString("🗂 **Sessions here**, most recent first:")
	for _, s := range list {
		fmt.Fprintf(&b, "\n• %s — %s · %s · “%s”", render.CodeSpan(render.ShortID(s.SessionID)), Ago(now.Sub(s.LastActiveAt)), render.USD(s.CostUSD),
			textcut.OneLine(s.Summary, 100))
		if s.ID == c.ID() {
			b.WriteString(" _(this thread)_")
		}
	}
	b.WriteString("\nContinue one in a new thread with `" + bridges.CommandPrefix + "resume ID`.")
	c.Notice(ctx, b.String())
}

// Ago renders how long ago something happened: "just now", "5m ago", "3h ago", "2d ago".
func Ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	}
}

// runResume moves the session arg (a prefix of its id, as !sessions shows
// it) into this conversation. It refuses a session of another bot or agent
// profile, one of another channel whose conversation the user took no part
// in (unless an admin), and a conversation that already has a session with
// messages. The session's conversation gives it up on its own worker,
// refusing while its agent works; the answer comes back later (see
// Conversation.Resume). Until then this conversation sends nothing to the
// agent.
func runResume(ctx context.Context, c Conversation, who worker.Person, l Line) {
	id := l.Arg(0)
	if len(l.Args) != 1 {
		c.Notice(ctx, "Usage: `"+bridges.CommandPrefix+"resume ID` — `"+bridges.CommandPrefix+"sessions` lists the IDs.")
		return
	}
	switch err := c.ResumeState(); {
	case errors.Is(err, worker.ErrResuming):
		c.Notice(ctx, "⏳ A "+bridges.CommandPrefix+"resume is already under way here.")
		return
	case err != nil:
		c.Notice(ctx, "⛔ The agent is working in this thread: "+bridges.CommandPrefix+"resume works in a thread whose agent is idle (best: a new thread).")
		return
	}
	found, err := c.Store().SessionsByPrefix(ctx, c.Bot().Name, id)
	switch {
	case errors.Is(err, store.ErrInvalidArgument):
		c.Notice(ctx, "Usage: `"+bridges.CommandPrefix+"resume ID` with at least 4 characters of a session id (`"+bridges.CommandPrefix+"sessions` lists them).")
		return
	case err != nil:
		c.Log().Error("find session", "err", err)
		c.Notice(ctx, "⚠️ Could not look the session up (database error).")
		return
	case len(found) == 0:
		c.Notice(ctx, "No session "+render.CodeSpan(id)+" of this bot. `"+bridges.CommandPrefix+"sessions` lists the sessions of a channel.")
		return
	case len(found) > 1:
		c.Notice(ctx, "Several sessions start with "+render.CodeSpan(id)+": give more characters of the id.")
		return
	}
	target := found[0]
	if refusal := resumeRefusal(ctx, c, target, who); refusal != "" {
		c.Log().Info("resume refused", "session", target.SessionID, "user", who.ID, "why", refusal)
		c.Notice(ctx, refusal)
		return
	}
	if err := c.Resume(ctx, target, who); err != nil {
		c.Log().Warn("ask the session's conversation to give it up", "session", target.SessionID, "err", err)
		c.Notice(ctx, "⚠️ The thread that holds that session is busy; please try again in a moment.")
	}
}

// chatPerson is the author of a command in c, for the access decision.
func chatPerson(c Conversation, who worker.Person) access.Person {
	return access.Person{Via: access.ViaChat, UserID: who.ID, In: c.Key()}
}

// sessionProfile is the profile whose agent holds target's session: the
// one !agent moved its conversation to, else the conversation's own.
func sessionProfile(target store.SessionInfo) string {
	return cmp.Or(target.AgentOverride, target.Agent)
}

// resumeRefusal says why who may not resume target in c ("" if they may):
// the access decision must let them resume target's session and write in
// c.
func resumeRefusal(ctx context.Context, c Conversation, target store.SessionInfo, who worker.Person) string {
	switch {
	case target.ID == c.ID():
		return "This thread already has session " + render.CodeSpan(render.ShortID(target.SessionID)) + "."
	case sessionProfile(target) != c.Profile().Name:
		return "⛔ Session " + render.CodeSpan(render.ShortID(target.SessionID)) + " belongs to another agent profile (" + render.CodeSpan(sessionProfile(target)) + ")."
	case target.Summary == "":
		return "Session " + render.CodeSpan(render.ShortID(target.SessionID)) + " has no messages yet: nothing to resume."
	}
	p := chatPerson(c, who)
	d, err := c.Access().Decide(ctx, p, access.Conv{ID: target.ID, Key: bridges.ConversationKey(target.Key)}, access.Resume)
	switch {
	case err != nil:
		c.Log().Error("check resume access", "err", err)
		return "⚠️ Could not check who may resume that session (database error)."
	case !d.Allowed && !d.Personal:
		return "⛔ Session " + render.CodeSpan(render.ShortID(target.SessionID)) + " is a conversation of another channel that you did not take part in."
	case !d.Allowed:
		return "⛔ Session " + render.CodeSpan(render.ShortID(target.SessionID)) + " is not yours to resume: only the person who started its conversation may."
	}
	if d, err = c.Access().Decide(ctx, p, access.Conv{ID: c.ID(), Key: c.Key()}, access.Write); err != nil || !d.Allowed {
		return "⛔ You may not write in this conversation."
	}
	mine, err := c.Store().SessionSummary(ctx, c.ID())
	if err != nil {
		c.Log().Error("read this conversation's summary", "err", err)
		return "⚠️ Could not read this conversation (database error)."
	}
	if mine != "" {
		return "⛔ This thread has its own session already. Use `" + bridges.CommandPrefix + "resume` in a new thread (or `" + bridges.CommandPrefix + "new` here first, which forgets this thread's session)."
	}
	return ""
}
