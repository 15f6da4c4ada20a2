package cards

import (
	"context"
	"slices"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// openCard posts a card, records the request and starts its timeout. A
// card that cannot be posted is denied at once (nobody could answer it).
func (s *Set) openCard(ctx context.Context, cd *card) {
	cd.requesters = s.h.Requesters()
	if run := s.h.ScheduledRun(); run != "" && cd.kind != cardApproval {
		cd.body += "\n_⏰ Asked during a run of schedule " + run + ": " + deciderText(cd.requesters) + " may decide._"
	}
	s.seq++
	cd.seq = s.seq
	s.h.BeforeCard(ctx)
	if d := s.h.Profile().ApprovalTimeout; d > 0 {
		s.h.StartTimer(d, cd.id) // counted from when the card shows
	}
	s.auditRequest(ctx, store.Approval{
		ID: cd.id, ConversationID: s.h.ID(), ToolName: cd.req.ToolName, Input: cd.req.Input,
		RequestedBy: strings.Join(authorIDs(cd.requesters), ","),
	})
	ref, err := s.h.Post(ctx, cd.message(s.h.ID(), s.h.Limits(), s.h.MaxRunes()))
	if err != nil {
		s.h.StopTimer(cd.id)
		s.h.Log().Error("post approval card; denying the request", "request", cd.id, "err", err)
		msg := "The approval request could not be shown to the user (chat error), so the call was denied. Try again later."
		if cd.answersCLI() {
			s.respond(ctx, cd.id, streamjson.Decision{Message: msg})
		}
		s.audit(ctx, cd.id, store.DecisionDeny, "", msg)
		return
	}
	cd.ref, cd.posted = ref, true
	st, id, msgID := s.h.Store(), cd.id, ref.ID
	s.h.Record(ctx, "store card reference", func(ctx context.Context) error {
		return st.SetApprovalCardRef(ctx, id, delivery.EncodeCardRef(ref), msgID)
	}, "request", id)
	s.open[cd.id] = cd
}

// OnAction handles a click on one of this conversation's cards.
func (s *Set) OnAction(ctx context.Context, a bridges.Action) {
	cd := s.open[a.CardID]
	if cd == nil {
		s.h.ReplyPrivately(ctx, a, "This request is no longer open.")
		return
	}
	who := worker.Person{ID: a.UserID, Name: a.UserName}
	if !s.mayDecide(cd, who.ID) {
		s.h.Log().Info("click refused: not allowed to decide", "user", a.UserID, "card", cd.id)
		s.h.ReplyPrivately(ctx, a, "Sorry, only "+names(cd.requesters)+", approvers or admins can answer this request.")
		return
	}
	var problem string
	switch cd.kind {
	case cardQuestion:
		problem = s.clickQuestion(ctx, cd, a.Choice, who)
	case cardApproval:
		problem = s.decideApproval(ctx, cd, a.Choice, who)
	default:
		problem = s.decide(ctx, cd, a.Choice, who)
	}
	if problem != "" {
		s.h.ReplyPrivately(ctx, a, problem)
	}
}

// mayDecide: the people whose messages started the turn, approvers, admins.
func (s *Set) mayDecide(cd *card, user string) bool {
	_, requester := cd.requesters[user]
	return requester || s.h.IsApprover(user)
}

// retireCard shows how a card ended (no buttons) and forgets it. Where the
// card can no longer be edited, the status is posted as a new message
// quoting the card.
func (s *Set) retireCard(ctx context.Context, cd *card, status string) {
	delete(s.open, cd.id)
	s.h.StopTimer(cd.id)
	if !cd.posted {
		return
	}
	text := textcut.Truncate(render.DecidedText(cd.body, status), s.h.MaxRunes())
	instead := bridges.Message{Text: textcut.Truncate(status, s.h.MaxRunes()), ReplyTo: cd.ref.ID}
	if _, err := s.h.EditOrPost(ctx, cd.ref, bridges.Message{Text: text, CardID: cd.id}, instead); err != nil {
		s.h.Log().Warn("update decided card", "card", cd.id, "err", err)
	}
}

// Close ends a card without answering the CLI (it withdrew the request,
// or the process is gone).
func (s *Set) Close(ctx context.Context, id string, audit store.Decision, by, status string) {
	cd := s.open[id]
	if cd == nil {
		return
	}
	s.audit(ctx, id, audit, by, status)
	s.retireCard(ctx, cd, status)
}

// Expire denies a card nobody answered within approval_timeout.
func (s *Set) Expire(ctx context.Context, id string) {
	cd := s.open[id]
	if cd == nil {
		return
	}
	wait := render.FormatWait(s.h.Profile().ApprovalTimeout)
	msg := "Nobody approved this tool call within " + wait + " (the bridge's approval timeout), so it was denied. " +
		"Do not retry it now: tell the user what you wanted to do so they can approve it when they are back."
	switch cd.kind {
	case cardQuestion:
		msg = "The user did not answer within " + wait + ". Continue without the answer or ask again later."
	case cardApproval:
		msg = cd.approval.Expired(wait)
	}
	if cd.answersCLI() {
		s.respond(ctx, id, streamjson.Decision{Message: msg})
	}
	s.audit(ctx, id, store.DecisionTimeout, "", msg)
	s.h.Log().Info("permission request expired", "request", id, "after", wait)
	s.retireCard(ctx, cd, "⌛ Expired: no answer within "+wait+".")
}

// ExpireAll closes every open card, e.g. when the process is gone.
func (s *Set) ExpireAll(ctx context.Context, status string) {
	ids := make([]string, 0, len(s.open))
	for id := range s.open {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		s.Close(ctx, id, store.DecisionExpired, "", status)
	}
}
