package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/bridges/core/render"
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
	sf, ok := cv.opts.Ownership.(ownership.SessionForwarder)
	if !ok {
		return false, nil
	}
	req := ownership.SessionRelease{From: target.Conversation.ID, To: cv.id, SessionID: target.SessionID, ByID: who.ID, ByName: who.Name,
		Until: cv.opts.Clock.Now().Add(remoteResumeAsk)}
	if err := sf.ForwardRelease(ctx, req); err != nil {
		return true, fmt.Errorf("ask the replica running the session's thread: %w", err)
	}
	cv.awaitedSession = target.SessionID
	cv.timers.After(remoteResumeWait, timerKey{timerResume, target.SessionID})
	cv.log.Info("!resume: asked the replica running the session's thread", "session", target.SessionID, "from", target.Conversation.ID)
	return true, nil
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
	cv.timers.Cancel(timerKey{timerResume, sessionID})
	cv.adoptSession(ctx, sessionID, summary, err)
}

// resumeTimedOut ends the wait for another replica's answer: the store
// says whether the session moved here meanwhile.
func (cv *conversation) resumeTimedOut(ctx context.Context, sessionID string) {
	if cv.awaitedSession != sessionID {
		return
	}
	cv.awaitedSession = ""
	row, err := cv.host.Store().ConversationByID(ctx, cv.id)
	switch {
	case err != nil:
		cv.adoptSession(ctx, sessionID, "", fmt.Errorf("read this conversation: %w", err))
	case row.SessionID == sessionID:
		summary, _ := cv.host.Store().SessionSummary(ctx, cv.id) // only shown
		cv.adoptSession(ctx, sessionID, summary, nil)
	default:
		cv.adoptSession(ctx, sessionID, "", errNoAnswer)
	}
}

// Resume asks the worker of target's conversation to give its session up
// (releaseSession); the answer comes back as an inCall to adoptSession.
// Until then this conversation sends nothing to the agent (see
// render.ResumeFailedText, render.ResumedText). An error means the request could not be
// made.
func (c Conv) Resume(ctx context.Context, target store.SessionInfo, who Person) error {
	cv := c.cv
	sessionID, to := target.SessionID, cv.row
	err := cv.host.Deliver(target.Conversation, inCall{func(ctx context.Context, old *conversation) {
		summary, err := old.releaseSession(ctx, sessionID, to, who)
		old.host.ReplyTo(to, inCall{func(ctx context.Context, cv *conversation) { cv.adoptSession(ctx, sessionID, summary, err) }})
	}})
	if errors.Is(err, ownership.ErrHeldElsewhere) { // another replica runs it (resumeRemote)
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
	if cv.acquiring || cv.turn != nil || len(cv.inflight) > 0 || cv.cards.Len() > 0 || agents.Busy(cv.sess) {
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
	cv.notice(ctx, render.MovedAwayText(render.Mention(who.Name, who.ID), sessionID))
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
		cv.notice(ctx, render.ResumeFailedText(sessionID, errors.Is(err, ErrSessionBusy), errors.Is(err, store.ErrSessionMoved), err))
		return
	}
	old := cv.row.SessionID
	cv.closeSession(ctx, "⌛ Expired: this thread resumed another session.")
	cv.row.SessionID, cv.resume, cv.freshRetry = sessionID, true, false
	text := render.ResumedText(sessionID, summary)
	if wt := cv.retireWorktree(ctx, old); wt != "" {
		text += "\n" + wt
	}
	cv.notice(ctx, text)
}
