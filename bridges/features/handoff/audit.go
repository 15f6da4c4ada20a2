package handoff

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// auditTimeout bounds writing one audit row.
const auditTimeout = 10 * time.Second

// trail is what the audit knows of one request so far: what was asked
// and from where, then who (once authenticated) and which conversation
// (once named), filled in as the request is checked. A refusal is
// recorded with what the trail holds at that point.
type trail struct{ ev store.HandoffEvent }

type trailKey struct{}

// audited gives each request of h a trail for request (attach, send,
// decide, export, import) in its context.
func (s *Server) audited(request string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		t := &trail{ev: store.HandoffEvent{Request: request, Remote: r.RemoteAddr}}
		h(w, r.WithContext(context.WithValue(r.Context(), trailKey{}, t)))
	}
}

// trailOf returns ctx's trail; a throwaway one when it has none (a
// handler called without audited, as in tests of one function).
func trailOf(ctx context.Context) *trail {
	if t, ok := ctx.Value(trailKey{}).(*trail); ok {
		return t
	}
	return &trail{}
}

// onConversation notes conv in ctx's trail.
func onConversation(ctx context.Context, conv store.Conversation) {
	t := trailOf(ctx)
	t.ev.ConversationID, t.ev.Key = conv.ID, conv.Key
}

// record writes action with ctx's trail to the audit log and the
// bridge's log. It writes even when ctx was cancelled (a terminal that
// went away still detached), within auditTimeout.
func (s *Server) record(ctx context.Context, action store.HandoffAction, reason string) error {
	ev := trailOf(ctx).ev
	ev.Action, ev.Reason = action, reason
	s.log.InfoContext(ctx, "handoff audit", "action", action, "person", ev.Person, "user", ev.UserID,
		"conversation", ev.ConversationID, "key", bridges.ConversationKey(ev.Key), "request", ev.Request, "reason", reason, "remote", ev.Remote)
	if ev.Request == "" {
		return nil // not a request of the server's routes
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), auditTimeout)
	defer cancel()
	if err := s.opts.Store.RecordHandoff(wctx, ev); err != nil {
		return fmt.Errorf("audit %s: %w", action, err)
	}
	return nil
}

// audit records action of the request in ctx; the caller goes on only
// when it was recorded (fail closed: no attach or export without its
// audit row).
func (s *Server) audit(ctx context.Context, action store.HandoffAction) error {
	return s.record(ctx, action, "")
}

// auditAfter records action once it happened (a detach, a finished
// import): a failure is logged, as there is nothing left to refuse.
func (s *Server) auditAfter(ctx context.Context, action store.HandoffAction) {
	if err := s.record(ctx, action, ""); err != nil {
		s.log.ErrorContext(ctx, "handoff audit row not written", "action", action, "err", err)
	}
}

// auditRefusal records a refused request with its reason (best effort:
// the request is refused either way).
func (s *Server) auditRefusal(ctx context.Context, rf *refusal) {
	if err := s.record(ctx, store.HandoffRefused, rf.msg); err != nil {
		s.log.ErrorContext(ctx, "handoff audit row not written", "action", store.HandoffRefused, "err", err)
	}
}

// isRefusal returns err's refusal, if it is one.
func isRefusal(err error) (*refusal, bool) {
	var rf *refusal
	ok := errors.As(err, &rf)
	return rf, ok
}
