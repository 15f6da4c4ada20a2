package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/queue"
	"github.com/agentbridge/agentbridge/store"
)

// This file holds !sessions and !resume. A session is the agent's memory
// of a conversation (the CLI's session id and its private state, plus its
// worktree): !resume moves one from the conversation that holds it to the
// one the command is written in, through the worker of each — the old
// conversation's worker gives it up (it alone knows whether its agent is
// working), then the new one takes it.

// maxSessionsListed caps !sessions.
const maxSessionsListed = 15

// inCall runs f on a conversation's worker: how one conversation asks
// another to do something with its own state.
type inCall struct {
	f func(ctx context.Context, cv *conversation)
}

func (inCall) isInput() {}

// errSessionBusy: the session's agent is working in its conversation.
var errSessionBusy = errors.New("the session's agent is working in its thread")

// cmdSessions lists the conversations of this channel (in a DM: of this
// DM) with their session id, last activity, cost and first prompt.
func (cv *conversation) cmdSessions(ctx context.Context) {
	list, err := cv.core.st.ListSessions(ctx, cv.bot.Name, cv.key.Channel, maxSessionsListed)
	if err != nil {
		cv.log.Error("list sessions", "err", err)
		cv.notice(ctx, "⚠️ Could not list the sessions (database error).")
		return
	}
	if len(list) == 0 {
		cv.notice(ctx, "🗂 No sessions here yet: a conversation has a session once the agent got a message.")
		return
	}
	now := cv.core.clock.Now()
	var b strings.Builder
	b.WriteString("🗂 **Sessions here**, most recent first:")
	for _, s := range list {
		fmt.Fprintf(&b, "\n• %s — %s · %s · “%s”", codeSpan(shortID(s.SessionID)), ago(now.Sub(s.LastActiveAt)), usd(s.CostUSD),
			oneLine(s.Summary, 100))
		if s.ID == cv.id {
			b.WriteString(" _(this thread)_")
		}
	}
	b.WriteString("\nContinue one in a new thread with `" + bridges.CommandPrefix + "resume ID`.")
	cv.notice(ctx, b.String())
}

// ago renders how long ago something happened: "just now", "5m ago", "3h ago", "2d ago".
func ago(d time.Duration) string {
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

// cmdResume moves the session arg (a prefix of its id, as !sessions shows
// it) into this conversation. It refuses a session of another bot or agent
// profile, one of another channel whose conversation the user took no part
// in (unless an admin), and a conversation that already has a session with
// messages. The session's conversation gives it up on its own worker
// (releaseSession), refusing while its agent works; the answer comes back
// as an inCall to adoptSession. Until then this conversation sends nothing
// to the agent.
func (cv *conversation) cmdResume(ctx context.Context, l cmdLine, who author) {
	id := l.arg(0)
	if len(l.args) != 1 {
		cv.notice(ctx, "Usage: `"+bridges.CommandPrefix+"resume ID` — `"+bridges.CommandPrefix+"sessions` lists the IDs.")
		return
	}
	switch {
	case cv.resuming:
		cv.notice(ctx, "⏳ A "+bridges.CommandPrefix+"resume is already under way here.")
		return
	case cv.acquiring || cv.turn != nil || len(cv.inflight) > 0 || len(cv.cards) > 0:
		cv.notice(ctx, "⛔ The agent is working in this thread: "+bridges.CommandPrefix+"resume works in a thread whose agent is idle (best: a new thread).")
		return
	}
	found, err := cv.core.st.SessionsByPrefix(ctx, cv.bot.Name, id)
	switch {
	case errors.Is(err, store.ErrInvalidArgument):
		cv.notice(ctx, "Usage: `"+bridges.CommandPrefix+"resume ID` with at least 4 characters of a session id (`"+bridges.CommandPrefix+"sessions` lists them).")
		return
	case err != nil:
		cv.log.Error("find session", "err", err)
		cv.notice(ctx, "⚠️ Could not look the session up (database error).")
		return
	case len(found) == 0:
		cv.notice(ctx, "No session "+codeSpan(id)+" of this bot. `"+bridges.CommandPrefix+"sessions` lists the sessions of a channel.")
		return
	case len(found) > 1:
		cv.notice(ctx, "Several sessions start with "+codeSpan(id)+": give more characters of the id.")
		return
	}
	target := found[0]
	if refusal := cv.resumeRefusal(ctx, target, who); refusal != "" {
		cv.log.Info("resume refused", "session", target.SessionID, "user", who.id, "why", refusal)
		cv.notice(ctx, refusal)
		return
	}
	sessionID, to := target.SessionID, cv.row
	err = cv.core.onWorker(target.Conversation, func(ctx context.Context, old *conversation) {
		summary, err := old.releaseSession(ctx, sessionID, to, who)
		old.core.replyTo(to, func(ctx context.Context, cv *conversation) { cv.adoptSession(ctx, sessionID, summary, err) })
	})
	if err != nil {
		cv.log.Warn("ask the session's conversation to give it up", "session", sessionID, "err", err)
		cv.notice(ctx, "⚠️ The thread that holds that session is busy; please try again in a moment.")
		return
	}
	cv.resuming = true
}

// resumeRefusal says why who may not resume target here ("" if they may).
func (cv *conversation) resumeRefusal(ctx context.Context, target store.SessionInfo, who author) string {
	switch {
	case target.ID == cv.id:
		return "This thread already has session " + codeSpan(shortID(target.SessionID)) + "."
	case target.Agent != cv.profile.Name:
		return "⛔ Session " + codeSpan(shortID(target.SessionID)) + " belongs to another agent profile (" + codeSpan(target.Agent) + ")."
	case target.Summary == "":
		return "Session " + codeSpan(shortID(target.SessionID)) + " has no messages yet: nothing to resume."
	}
	if target.Key.Channel != cv.key.Channel && !isAdmin(cv.bot, who.id) && target.OwnerUserID != who.id {
		ok, err := cv.core.st.IsParticipant(ctx, target.ID, who.id, "")
		if err != nil {
			cv.log.Error("check resume access", "err", err)
			return "⚠️ Could not check who may resume that session (database error)."
		}
		if !ok {
			return "⛔ Session " + codeSpan(shortID(target.SessionID)) + " is a conversation of another channel that you did not take part in."
		}
	}
	mine, err := cv.core.st.SessionSummary(ctx, cv.id)
	if err != nil {
		cv.log.Error("read this conversation's summary", "err", err)
		return "⚠️ Could not read this conversation (database error)."
	}
	if mine != "" {
		return "⛔ This thread has its own session already. Use `" + bridges.CommandPrefix + "resume` in a new thread (or `" + bridges.CommandPrefix + "new` here first, which forgets this thread's session)."
	}
	return ""
}

// releaseSession runs on the worker of the conversation that holds session
// sessionID: unless its agent is working (a turn, a message in flight, an
// open card, a background task, or it is starting), it stops the idle
// process and moves the session, with its summary, to conversation to; it
// keeps a fresh session itself. It returns the session's summary.
func (cv *conversation) releaseSession(ctx context.Context, sessionID string, to store.Conversation, who author) (string, error) {
	if cv.row.SessionID != sessionID {
		return "", store.ErrSessionMoved
	}
	if cv.acquiring || cv.turn != nil || len(cv.inflight) > 0 || len(cv.cards) > 0 || sessionBusy(cv.sess) {
		return "", errSessionBusy
	}
	summary, err := cv.core.st.SessionSummary(ctx, cv.id)
	if err != nil {
		return "", err
	}
	cv.closeSession(ctx, "⌛ Expired: the session moved to another thread.")
	fresh := uuid.NewString()
	if err := cv.core.st.MoveSession(ctx, cv.id, to.ID, sessionID, fresh); err != nil {
		return "", err
	}
	cv.row.SessionID, cv.resume, cv.freshRetry = fresh, false, false
	cv.log.Info("session moved to another conversation", "session", sessionID, "to", to.Key, "user", who.id)
	cv.notice(ctx, fmt.Sprintf("↪️ %s continued this thread's session %s in another thread. A new message here starts a fresh session.",
		mention(who), codeSpan(shortID(sessionID))))
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
	switch {
	case errors.Is(err, errSessionBusy):
		cv.notice(ctx, "⛔ Session "+codeSpan(shortID(sessionID))+" is live in another thread: its agent is working there. "+
			"Try again when it is done (or after `"+bridges.CommandPrefix+"stop` there).")
		return
	case errors.Is(err, store.ErrSessionMoved):
		cv.notice(ctx, "Session "+codeSpan(shortID(sessionID))+" moved meanwhile; `"+bridges.CommandPrefix+"sessions` shows where sessions are now.")
		return
	case err != nil:
		cv.log.Error("resume session", "session", sessionID, "err", err)
		cv.notice(ctx, "⚠️ Could not resume session "+codeSpan(shortID(sessionID))+": "+oneLine(err.Error(), 200))
		return
	}
	old := cv.row.SessionID
	cv.closeSession(ctx, "⌛ Expired: this thread resumed another session.")
	cv.row.SessionID, cv.resume, cv.freshRetry = sessionID, true, false
	text := fmt.Sprintf("↩️ Resumed session %s: “%s”. The agent remembers that conversation; carry on here.", codeSpan(shortID(sessionID)), oneLine(summary, 100))
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

// noteActivity records, for !sessions, that ledger message m went to the
// agent: the conversation's last activity, and its first prompt as the
// session's summary. A failure is logged: it costs a listing, not a message.
func (cv *conversation) noteActivity(ctx context.Context, m store.InboxMessage) {
	prompt := m.Text
	if strings.TrimSpace(prompt) == "" {
		prompt = "(attachment)"
	}
	if err := cv.core.st.NoteActivity(ctx, cv.id, prompt); err != nil {
		cv.log.Warn("note conversation activity", "ledger", m.ID, "err", err)
	}
}

// shortID is the part of a session id people see (and a worktree's
// branch is named after): its first 8 characters.
func shortID(sessionID string) string {
	if len(sessionID) > 8 {
		return sessionID[:8]
	}
	return sessionID
}
