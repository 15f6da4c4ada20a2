package core

import (
	"context"
	"errors"

	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/store"
)

// !resume across replicas: the core runs the requests and answers that
// reach this replica for its workers (the exchange itself is the
// workers': bridges/core/worker's resume.go).

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
		case errors.Is(err, worker.ErrSessionBusy):
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
	_, err = c.deliver(from, worker.Release(r.SessionID, to, worker.Person{ID: r.ByID, Name: r.ByName}, answer))
	if err != nil && !errors.Is(err, ownership.ErrHeldElsewhere) { // held elsewhere: its holder answers
		answer(ctx, "", worker.ErrSessionBusy)
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
	var failure error
	switch a.Failure {
	case "":
	case ownership.ReleaseBusy:
		failure = worker.ErrSessionBusy
	case ownership.ReleaseMoved:
		failure = store.ErrSessionMoved
	default:
		failure = errors.New(a.Failure)
	}
	c.replyTo(to, worker.Released(a.SessionID, a.Summary, failure))
}

// replyTo hands in to the worker of conversation conv from a goroutine of
// the core, waiting for room in its queue: an answer to a request conv
// made, which must not be lost to a full queue.
func (c *Core) replyTo(conv store.Conversation, in worker.Input) {
	runCtx := c.runCtx
	c.workers.Go(func() {
		w, err := c.deliver(conv, in)
		if worker.Full(err) {
			err = w.PushWait(runCtx, in)
		}
		if err != nil && runCtx.Err() == nil {
			c.log.Warn("answer to another conversation lost", "key", conv.Key, "err", err)
		}
	})
}
