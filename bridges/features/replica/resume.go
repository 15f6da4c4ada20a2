package replica

import (
	"context"
	"fmt"

	"github.com/agentbridge/agentbridge/bridges/core"
	"github.com/agentbridge/agentbridge/bridges/core/ownership"
)

// !resume of a session whose conversation another replica runs: the
// request goes to that conversation's holder, the answer back to the
// holder of the resuming conversation (core: resume.go), each as a
// signal on Channel for the holder of the conversation it names.

// SessionMover is what the core does with those signals (*core.Core).
// Without it, they are ignored (the asking conversation stops waiting
// after a while and says so).
type SessionMover interface {
	// HandleRelease gives a session of a conversation held here up.
	HandleRelease(ctx context.Context, r ownership.SessionRelease)
	// HandleReleased hands the answer to the resuming conversation held here.
	HandleReleased(ctx context.Context, a ownership.SessionReleased)
}

var (
	_ ownership.SessionForwarder = (*Replica)(nil)
	_ SessionMover               = (*core.Core)(nil)
)

// ForwardRelease implements ownership.SessionForwarder: it asks the holder of
// conversation rq.From.
func (r *Replica) ForwardRelease(ctx context.Context, rq ownership.SessionRelease) error {
	if err := r.send(ctx, signal{Conv: rq.From, Resume: &rq}); err != nil {
		return fmt.Errorf("forward !resume of session %s: %w", rq.SessionID, err)
	}
	return nil
}

// AnswerRelease implements ownership.SessionForwarder: it answers the holder
// of conversation a.To.
func (r *Replica) AnswerRelease(ctx context.Context, a ownership.SessionReleased) error {
	if err := r.send(ctx, signal{Conv: a.To, Resumed: &a}); err != nil {
		return fmt.Errorf("answer !resume of session %s: %w", a.SessionID, err)
	}
	return nil
}

// onResume acts on a !resume signal for a conversation held here.
func (r *Replica) onResume(ctx context.Context, c Core, s signal) {
	m, ok := c.(SessionMover)
	if !ok {
		r.log.Warn("a !resume signal, but the core cannot move sessions", "conversation", s.Conv)
		return
	}
	switch {
	case s.Resume != nil:
		m.HandleRelease(ctx, *s.Resume)
	case s.Resumed != nil:
		m.HandleReleased(ctx, *s.Resumed)
	}
}
