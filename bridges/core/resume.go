package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/queue"
	"github.com/agentbridge/agentbridge/store"
	"github.com/google/uuid"
)

// !resume: the exchange between two workers that moves a session from
// the conversation that holds it to the resuming one (Conv.Resume); the
// holding conversation's worker gives it up (releaseSession), as it alone
// knows whether its agent works, and the resuming one adopts it
// (adoptSession).
//
// Across replicas: when another replica runs that conversation (it holds
// its lease), the request goes to that replica and the answer comes back,
// both through the Ownership's SessionForwarder ability
// (bridges/core/ownership) (signals between replicas): the holder runs
// releaseSession on its worker, the resuming conversation adopts the
// session when the answer comes. The store is the truth: should the
// answer be lost, the resuming conversation looks there when it stops
// waiting (remoteResumeWait).

// How long a !resume waits for another replica's answer, and how long
// that replica may take to act on the request.
const (
	remoteResumeWait = 20 * time.Second
	remoteResumeAsk  = 10 * time.Second
)

// errNoAnswer: the replica running the session's conversation did not
// answer within remoteResumeWait.
var errNoAnswer = errors.New("the replica running that thread did not answer; please try again")

// resumeRemote asks the replica running target's conversation for its
// session; false when there is no such ability (one bridge).
func (cv *conversation) resumeRemote(ctx context.Context, target store.SessionInfo, who Person) (bool, error) {
	sf, ok := cv.core.opts.Ownership.(ownership.SessionForwarder)
	if !ok {
		return false, nil
	}
	req := ownership.SessionRelease{From: target.Conversation.ID, To: cv.id, SessionID: target.SessionID, ByID: who.ID, ByName: who.Name,
		Until: cv.core.clock.Now().Add(remoteResumeAsk)}
	if err := sf.ForwardRelease(ctx, req); err != nil {
		return true, fmt.Errorf("ask the replica running the session's thread: %w", err)
	}
	cv.awaitedSession = target.SessionID
	cv.after(remoteResumeWait, timerResume, target.SessionID)
	cv.log.Info("!resume: asked the replica running the session's thread", "session", target.SessionID, "from", target.Conversation.ID)
	return true, nil
}

// HandleRelease runs a ownership.SessionRelease on this replica, which runs
// conversation r.From: that conversation's worker gives the session up,
// and the answer goes to the replica running r.To.
func (c *Core) HandleRelease(ctx context.Context, r ownership.SessionRelease) {
	sf, ok := c.opts.Ownership.(ownership.SessionForwarder)
	if !ok {
		return
	}
	answer := func(ctx context.Context, summary string, err error) {
		a := ownership.SessionReleased{To: r.To, SessionID: r.SessionID, Summary: summary}
		switch {
		case err == nil:
		case errors.Is(err, ErrSessionBusy):
			a.Failure = ownership.ReleaseBusy
		case errors.Is(err, store.ErrSessionMoved):
			a.Failure = ownership.ReleaseMoved
		default:
			a.Failure = err.Error()
		}
		if err := sf.AnswerRelease(ctx, a); err != nil {
			c.log.Warn("!resume: answer the asking replica", "session", r.SessionID, "err", err)
		}
	}
	if c.clock.Now().After(r.Until) {
		answer(ctx, "", errors.New("the request came too late"))
		return
	}
	from, err := c.st.ConversationByID(ctx, r.From)
	if err != nil {
		answer(ctx, "", err)
		return
	}
	to, err := c.st.ConversationByID(ctx, r.To)
	if err != nil {
		answer(ctx, "", err)
		return
	}
	who := Person{r.ByID, r.ByName}
	err = c.onWorker(from, func(ctx context.Context, old *conversation) {
		summary, err := old.releaseSession(ctx, r.SessionID, to, who)
		answer(ctx, summary, err)
	})
	if err != nil && !errors.Is(err, ownership.ErrHeldElsewhere) { // held elsewhere: its holder answers
		answer(ctx, "", ErrSessionBusy)
	}
}

// HandleReleased hands a ownership.SessionReleased to the worker of conversation
// a.To, which this replica runs.
func (c *Core) HandleReleased(ctx context.Context, a ownership.SessionReleased) {
	to, err := c.st.ConversationByID(ctx, a.To)
	if err != nil {
		c.log.Warn("!resume: the answer's conversation", "conversation", a.To, "err", err)
		return
	}
	c.replyTo(to, func(ctx context.Context, cv *conversation) {
		var err error
		switch a.Failure {
		case "":
		case ownership.ReleaseBusy:
			err = ErrSessionBusy
		case ownership.ReleaseMoved:
			err = store.ErrSessionMoved
		default:
			err = errors.New(a.Failure)
		}
		cv.remoteAnswer(ctx, a.SessionID, a.Summary, err)
	})
}

// remoteAnswer adopts the answer to the !resume this conversation awaits
// (the session moved here, or why not). An answer that comes after the
// wait ended still adopts a session the store moved here.
func (cv *conversation) remoteAnswer(ctx context.Context, sessionID, summary string, err error) {
	if cv.awaitedSession != sessionID {
		if err == nil && cv.row.SessionID != sessionID {
			cv.log.Warn("!resume: a late answer moved the session here", "session", sessionID)
			cv.adoptSession(ctx, sessionID, summary, nil)
		}
		return
	}
	cv.awaitedSession = ""
	cv.cancelTimer(timerResume, sessionID)
	cv.adoptSession(ctx, sessionID, summary, err)
}

// resumeTimedOut ends the wait for another replica's answer: the store
// says whether the session moved here meanwhile.
func (cv *conversation) resumeTimedOut(ctx context.Context, sessionID string) {
	if cv.awaitedSession != sessionID {
		return
	}
	cv.awaitedSession = ""
	row, err := cv.core.st.ConversationByID(ctx, cv.id)
	switch {
	case err != nil:
		cv.adoptSession(ctx, sessionID, "", fmt.Errorf("read this conversation: %w", err))
	case row.SessionID == sessionID:
		summary, _ := cv.core.st.SessionSummary(ctx, cv.id) // only shown
		cv.adoptSession(ctx, sessionID, summary, nil)
	default:
		cv.adoptSession(ctx, sessionID, "", errNoAnswer)
	}
}

// Resume asks the worker of target's conversation to give its session up
// (releaseSession); the answer comes back as an inCall to adoptSession.
// Until then this conversation sends nothing to the agent (see
// resumeFailedText, resumedText). An error means the request could not be
// made.
func (c Conv) Resume(ctx context.Context, target store.SessionInfo, who Person) error {
	cv := c.cv
	sessionID, to := target.SessionID, cv.row
	err := cv.core.onWorker(target.Conversation, func(ctx context.Context, old *conversation) {
		summary, err := old.releaseSession(ctx, sessionID, to, who)
		old.core.replyTo(to, func(ctx context.Context, cv *conversation) { cv.adoptSession(ctx, sessionID, summary, err) })
	})
	if errors.Is(err, ownership.ErrHeldElsewhere) { // another replica runs it (resume.go)
		if asked, rerr := cv.resumeRemote(ctx, target, who); asked {
			err = rerr
		}
	}
	if err != nil {
		return err
	}
	cv.resuming = true
	return nil
}

// releaseSession runs on the worker of the conversation that holds session
// sessionID: unless its agent is working (a turn, a message in flight, an
// open card, a background task, or it is starting), it stops the idle
// process and moves the session, with its summary, to conversation to; it
// keeps a fresh session itself. It returns the session's summary.
func (cv *conversation) releaseSession(ctx context.Context, sessionID string, to store.Conversation, who Person) (string, error) {
	if cv.row.SessionID != sessionID {
		return "", store.ErrSessionMoved
	}
	if cv.acquiring || cv.turn != nil || len(cv.inflight) > 0 || cv.cards.Len() > 0 || sessionBusy(cv.sess) {
		return "", ErrSessionBusy
	}
	summary, err := cv.st.SessionSummary(ctx, cv.id)
	if err != nil {
		return "", err
	}
	cv.closeSession(ctx, "⌛ Expired: the session moved to another thread.")
	fresh := uuid.NewString()
	if err := cv.st.MoveSession(ctx, cv.id, to.ID, sessionID, fresh); err != nil {
		return "", err
	}
	cv.row.SessionID, cv.resume, cv.freshRetry = fresh, false, false
	cv.log.Info("session moved to another conversation", "session", sessionID, "to", to.Key, "user", who.ID)
	cv.notice(ctx, movedAwayText(who, sessionID))
	return summary, nil
}

// adoptSession runs on the resuming conversation's worker with the answer
// of releaseSession: on success the conversation now has session
// sessionID (the store already says so) and its next spawn resumes it.
func (cv *conversation) adoptSession(ctx context.Context, sessionID, summary string, err error) {
	cv.resuming = false
	defer cv.deliverPending(ctx) // messages written meanwhile waited
	if err != nil {
		if !errors.Is(err, ErrSessionBusy) && !errors.Is(err, store.ErrSessionMoved) {
			cv.log.Error("resume session", "session", sessionID, "err", err)
		}
		cv.notice(ctx, resumeFailedText(sessionID, err))
		return
	}
	old := cv.row.SessionID
	cv.closeSession(ctx, "⌛ Expired: this thread resumed another session.")
	cv.row.SessionID, cv.resume, cv.freshRetry = sessionID, true, false
	text := resumedText(sessionID, summary)
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

// movedAwayText tells the conversation that gave session sessionID up
// that who continued it elsewhere.
func movedAwayText(who Person, sessionID string) string {
	return fmt.Sprintf("↪️ %s continued this thread's session %s in another thread. A new message here starts a fresh session.",
		mention(who), render.CodeSpan(ShortID(sessionID)))
}

// resumeFailedText tells the resuming conversation why session sessionID
// could not be moved to it (err from the session's conversation).
func resumeFailedText(sessionID string, err error) string {
	switch {
	case errors.Is(err, ErrSessionBusy):
		return "⛔ Session " + render.CodeSpan(ShortID(sessionID)) + " is live in another thread: its agent is working there. " +
			"Try again when it is done (or after `" + bridges.CommandPrefix + "stop` there)."
	case errors.Is(err, store.ErrSessionMoved):
		return "Session " + render.CodeSpan(ShortID(sessionID)) + " moved meanwhile; `" + bridges.CommandPrefix + "sessions` shows where sessions are now."
	}
	return "⚠️ Could not resume session " + render.CodeSpan(ShortID(sessionID)) + ": " + textcut.OneLine(err.Error(), 200)
}

// resumedText tells the resuming conversation it now has session
// sessionID, whose first prompt was summary.
func resumedText(sessionID, summary string) string {
	return fmt.Sprintf("↩️ Resumed session %s: “%s”. The agent remembers that conversation; carry on here.", render.CodeSpan(ShortID(sessionID)), textcut.OneLine(summary, 100))
}

// ShortID is the part of a session id people see (and a worktree's
// branch is named after): its first 8 characters.
func ShortID(sessionID string) string {
	if len(sessionID) > 8 {
		return sessionID[:8]
	}
	return sessionID
}
