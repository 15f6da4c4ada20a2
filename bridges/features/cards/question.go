package cards

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/internal/textcut"
	"github.com/agentbridge/agentbridge/store"
)

// openQuestion shows AskUserQuestion as a card: one button per option, or
// toggles and Submit for multiple choice and several questions.
func (s *Set) openQuestion(ctx context.Context, req streamjson.PermissionRequest) {
	var in struct {
		Questions []render.Question `json:"questions"`
	}
	if err := json.Unmarshal(req.Input, &in); err != nil || len(in.Questions) == 0 {
		s.h.Log().Warn("AskUserQuestion without questions; allowing it unanswered", "err", err)
		s.respond(ctx, req.RequestID, streamjson.Decision{Allow: true, UpdatedInput: req.Input})
		return
	}
	cd := &card{id: req.RequestID, kind: cardQuestion, req: req, questions: in.Questions}
	cd.picked = make([][]bool, len(in.Questions))
	for i, q := range in.Questions {
		cd.picked[i] = make([]bool, len(q.Options))
	}
	cd.body = render.QuestionBody(cd.questions, nil)
	s.openCard(ctx, cd)
}

// openPlan shows ExitPlanMode as a plan approval card. The plan comes from
// the request's input or, when the CLI sent none, from the tool call.
func (s *Set) openPlan(ctx context.Context, req streamjson.PermissionRequest) {
	plan := render.Str(render.InputMap(req.Input), "plan")
	if plan == "" {
		plan = render.Str(render.InputMap(s.h.ToolInput(req.ToolUseID)), "plan")
	}
	body := render.PlanBody(plan, s.h.MaxRunes())
	if cs := render.Chunks(plan, s.h.MaxRunes()-100); len(cs) > 1 {
		// A long plan is posted in full first; the card refers to it.
		for _, c := range cs {
			s.h.Notice(ctx, c)
		}
		body = "📋 **Plan ready** (above) — approve to let the agent start."
	}
	s.openCard(ctx, &card{id: req.RequestID, kind: cardPlan, req: req, body: body})
}

// clickQuestion handles a click on a question card. It returns a problem to
// tell the clicker, or "".
func (s *Set) clickQuestion(ctx context.Context, cd *card, choice string, who worker.Person) string {
	if cd.elicit != nil && choice == bridges.ChoiceDeny { // elicit.go
		s.declineElicitation(ctx, cd, who)
		return ""
	}
	if choice == bridges.ChoiceSubmit {
		answers := render.PickedAnswers(cd.questions, cd.picked)
		if len(answers) == 0 {
			return "Pick at least one option first."
		}
		if missing := cd.elicit.Missing(answers); missing != "" {
			return "Answer " + missing + " first."
		}
		s.answerQuestion(ctx, cd, answers, who)
		return ""
	}
	var qi, oi int
	if _, err := fmt.Sscanf(choice, "q%d.%d", &qi, &oi); err != nil || qi < 0 || qi >= len(cd.questions) || oi < 0 || oi >= len(cd.questions[qi].Options) {
		return "That choice is not available on this request."
	}
	if !cd.needsSubmit() {
		q := cd.questions[qi]
		s.answerQuestion(ctx, cd, map[string]string{q.Question: q.Options[oi].Label}, who)
		return ""
	}
	if cd.questions[qi].MultiSelect {
		cd.picked[qi][oi] = !cd.picked[qi][oi]
	} else {
		for i := range cd.picked[qi] {
			cd.picked[qi][i] = i == oi
		}
	}
	cd.body = cd.intro + render.QuestionBody(cd.questions, cd.picked)
	m := cd.message(s.h.ID(), s.h.Limits(), s.h.MaxRunes())
	again := m
	// The card again is a new message: under the card's Idem a platform
	// that dedupes by it (WhatsApp's message id, Discord's nonce) would
	// show the old one instead. Its reference is stored at once below.
	again.Idem = ""
	ref, err := s.h.EditOrPost(ctx, cd.ref, m, again) // too old to edit: the card again, below
	if err != nil {
		s.h.Log().Warn("update question card", "card", cd.id, "err", err)
		return ""
	}
	if ref.ID != cd.ref.ID {
		if err := s.h.Store().SetApprovalCardRef(ctx, cd.id, delivery.EncodeCardRef(ref), ref.ID); err != nil {
			s.h.Log().Error("store card reference", "request", cd.id, "err", err)
		}
	}
	cd.ref = ref
	return ""
}

// answerQuestion allows AskUserQuestion with the original input plus the
// answers.
func (s *Set) answerQuestion(ctx context.Context, cd *card, answers map[string]string, who worker.Person) {
	updated, a, shown, err := render.Answered(cd.req.Input, cd.questions, answers)
	if err != nil {
		s.h.Log().Error("answer question", "err", err)
		return
	}
	status := "✅ Answered by " + mention(who) + ": " + textcut.OneLine(shown, 300)
	s.resolve(ctx, cd, streamjson.Decision{Allow: true, UpdatedInput: updated}, store.DecisionAllow, who, string(a), status)
}

// AnswerFromText lets a plain reply answer an open card: any reply answers
// an open question (as free text, or option numbers), and on platforms
// without buttons a choice (ChoiceFromText: a number, "yes", "no", …)
// decides a permission or plan card: the card the reply quotes
// (m.ReplyTo, found among the open cards or in the store), else the
// newest one. A choice quoting a card that is closed decides nothing and
// says so; a reply quoting a message that is no card decides no card. A
// message with an attachment is never an answer. A reply from someone who
// may not decide the card is refused with a notice. It reports whether m
// was consumed.
func (s *Set) AnswerFromText(ctx context.Context, m store.InboxMessage) bool {
	if len(m.Files) > 0 {
		return false // an attachment is for the agent, never a card's answer
	}
	who := worker.Person{ID: m.UserID, Name: m.UserName}
	text := strings.TrimSpace(m.Text)
	quoted, quotesCard := (*card)(nil), false
	if !s.h.Limits().CanButtons && m.ReplyTo != "" && text != "" {
		var consumed bool
		quoted, quotesCard, consumed = s.quotedCard(ctx, m.ReplyTo, text)
		if consumed {
			return true
		}
	}
	if len(s.open) == 0 {
		return false
	}
	if cd := s.newestCard(cardQuestion); cd != nil && text != "" && (!quotesCard || quoted == cd) {
		// While a question is open every reply is read as its answer, so a
		// reply from someone who may not decide it is refused like a click
		// (and not passed on: it was written as an answer).
		if !s.mayDecide(cd, who.ID) {
			s.h.Log().Info("typed answer refused: not allowed to decide", "user", who.ID, "card", cd.id)
			s.h.Notice(ctx, mention(who)+", only "+names(cd.requesters)+", approvers or admins can answer this question; your message was not passed on.")
			return true
		}
		s.answerQuestion(ctx, cd, render.TextAnswers(cd.questions, text), who)
		return true
	}
	if s.h.Limits().CanButtons {
		return false
	}
	cd := quoted
	if m.ReplyTo == "" {
		cd = s.newestCard(cardPermission, cardPlan, cardApproval)
	}
	if cd == nil || cd.kind == cardQuestion {
		return false // no card, or the reply quotes a message that is none
	}
	choice := bridges.ChoiceFromText(cd.buttons(), text)
	if choice == "" {
		if _, err := strconv.Atoi(strings.Trim(text, " .!")); err == nil {
			s.h.Notice(ctx, "That number is no choice of this request: reply "+bridges.NumberedChoices(cd.buttons())+".")
			return true
		}
		return false
	}
	if !s.mayDecide(cd, who.ID) {
		s.h.Notice(ctx, mention(who)+", only "+names(cd.requesters)+", approvers or admins can answer this request.")
		return true
	}
	decide := s.decide
	if cd.kind == cardApproval {
		decide = s.decideApproval
	}
	if problem := decide(ctx, cd, choice, who); problem != "" {
		s.h.Notice(ctx, problem)
	}
	return true
}

// quotedCard finds the card whose message (Post's MessageRef.ID) a reply
// quotes: an open card of this conversation, or one in the store. A
// choice quoting a card that is no longer open is answered here (it
// decides nothing, and the chat is told why): consumed is then true.
// isCard is false when the quoted message shows no card.
func (s *Set) quotedCard(ctx context.Context, msgID, text string) (open *card, isCard, consumed bool) {
	for _, cd := range s.open {
		if cd.posted && cd.ref.ID == msgID {
			return cd, true, false
		}
	}
	a, err := s.h.Store().ApprovalByCardMessage(ctx, s.h.ID(), msgID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, false, false
	case err != nil:
		// Unknown whether it is a closed card: decide nothing.
		s.h.Log().Error("look up the card a reply quotes", "msg_id", msgID, "err", err)
		s.h.Notice(ctx, "I could not check which request your reply quotes, so it decided nothing. Please try again.")
		return nil, true, true
	}
	if !render.IsChoiceText(text) {
		return nil, true, false // about the closed card, for the agent
	}
	s.h.Log().Info("choice quoting a closed card ignored", "card", a.ID, "decision", a.Decision)
	s.h.Notice(ctx, "That request ("+render.CodeSpan(a.ToolName)+") is already closed — "+render.ClosedHow(a)+
		" — so your reply decided nothing. Reply to an open request to decide it.")
	return nil, true, true
}

// newestCard returns the most recently opened open card of the given kinds.
func (s *Set) newestCard(kinds ...cardKind) *card {
	var best *card
	for _, cd := range s.open {
		for _, k := range kinds {
			if cd.kind == k && (best == nil || cd.seq > best.seq) {
				best = cd
			}
		}
	}
	return best
}
