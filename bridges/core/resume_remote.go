package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentbridge/agentbridge/bridges/commands"
	"github.com/agentbridge/agentbridge/bridges/ownership"
	"github.com/agentbridge/agentbridge/store"
)

// !resume across replicas. !resume moves a session from the conversation
// that holds it to the resuming one; the holding conversation's worker
// gives it up (releaseSession), as it alone knows whether its agent
// works. When another replica runs that conversation (it holds its
// lease), the request goes to that replica and the answer comes back, both
// through the Ownership's SessionForwarder ability (bridges/ownership) (signals between
// replicas): the holder runs releaseSession on its worker, the resuming
// conversation adopts the session when the answer comes. The store is the
// truth: should the answer be lost, the resuming conversation looks there
// when it stops waiting (remoteResumeWait).

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
func (cv *conversation) resumeRemote(ctx context.Context, target store.SessionInfo, who author) (bool, error) {
	sf, ok := cv.core.opts.Ownership.(ownership.SessionForwarder)
	if !ok {
		return false, nil
	}
	req := ownership.SessionRelease{From: target.Conversation.ID, To: cv.id, SessionID: target.SessionID, ByID: who.id, ByName: who.name,
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
		case errors.Is(err, commands.ErrSessionBusy):
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
	who := author{r.ByID, r.ByName}
	err = c.onWorker(from, func(ctx context.Context, old *conversation) {
		summary, err := old.releaseSession(ctx, r.SessionID, to, who)
		answer(ctx, summary, err)
	})
	if err != nil && !errors.Is(err, ownership.ErrHeldElsewhere) { // held elsewhere: its holder answers
		answer(ctx, "", commands.ErrSessionBusy)
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
			err = commands.ErrSessionBusy
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
