package core

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/bridges/schedule/schedreq"
	"github.com/agentbridge/agentbridge/config/policy"
	"github.com/agentbridge/agentbridge/store"
)

// cardKind says what a card asks.
type cardKind int

const (
	cardPermission cardKind = iota // may the tool run?
	cardQuestion                   // AskUserQuestion
	cardPlan                       // ExitPlanMode
	cardSchedule                   // a schedule the agent asks for (agent_schedule.go); the CLI waits for nothing
)

// card is an open permission request shown in the thread.
type card struct {
	id          string // CardID; the CLI's request id
	seq         int    // opening order within the conversation
	kind        cardKind
	req         streamjson.PermissionRequest
	ref         bridges.MessageRef
	posted      bool
	requesters  map[string]author
	body        string            // the readable request, without choices or status
	always      []json.RawMessage // updatedPermissions for "Always allow"; nil = no such button
	alwaysLabel string
	grants      []policy.Rule      // what "Always allow" stores for the conversation (see grants.AlwaysPermissions)
	questions   []render.Question  // cardQuestion
	picked      [][]bool           // cardQuestion: selected options per question
	schedule    *schedreq.Request  // cardSchedule: what approving it creates
	intro       string             // cardQuestion: text above the questions (an elicitation's server and message)
	elicit      *render.ElicitForm // cardQuestion showing an MCP elicitation (agentstate.go); nil for AskUserQuestion
}

// answersCLI reports whether the CLI waits for the card's decision (every
// card but a schedule the agent asks for).
func (cd *card) answersCLI() bool { return cd.kind != cardSchedule }

// message renders the open card (render.CardMessage); a permission card
// notes what Always allow does.
func (cd *card) message(lim bridges.Limits, maxRunes int) bridges.Message {
	c := render.Card{ID: cd.id, Body: cd.body, Buttons: cd.buttons()}
	switch cd.kind {
	case cardPermission:
		c.Note = cd.alwaysLabel
	case cardQuestion:
		c.Questions = cd.questions
	}
	return render.CardMessage(c, lim, maxRunes)
}

// buttons are the card's choices.
func (cd *card) buttons() []bridges.Button {
	switch cd.kind {
	case cardPlan:
		return render.PlanButtons()
	case cardSchedule:
		return render.ScheduleButtons()
	case cardQuestion:
		bs := render.QuestionButtons(cd.questions, cd.picked)
		if cd.elicit != nil {
			bs = append(bs, bridges.Button{ID: bridges.ChoiceDeny, Label: "Decline", Style: bridges.StyleDanger})
		}
		return bs
	default:
		return render.PermissionButtons(cd.always != nil)
	}
}

// needsSubmit: one click cannot answer the card, so clicks toggle and
// Submit answers (render.NeedsSubmit).
func (cd *card) needsSubmit() bool { return render.NeedsSubmit(cd.questions) }

// openCard posts a card, records the request and starts its timeout. A
// card that cannot be posted is denied at once (nobody could answer it).
func (cv *conversation) openCard(ctx context.Context, cd *card) {
	cd.requesters = cv.requesters()
	if run := cv.scheduledRun(); run != "" && cd.kind != cardSchedule {
		cd.body += "\n_⏰ Asked during a run of schedule " + run + ": " + deciderText(cd.requesters) + " may decide._"
	}
	cv.cardSeq++
	cd.seq = cv.cardSeq
	if t := cv.turn; t != nil && (t.live.posted || cv.streams() && render.HasText(t.segs)) {
		// Close the live message so the rest of the turn appears below the
		// card. On a quick turn its first post is not due yet: post the text
		// that introduces the card now, or it would show below the card.
		text := render.Tail(render.Join(t.segs), cv.maxRunes())
		if t.live.posted {
			cv.finishLive(ctx, text)
		} else if text != "" {
			cv.cancelTimer(timerLive, "")
			cv.budget.take(cv.core.clock.Now(), cv.limits.EditInterval, true)
			if _, err := cv.post(ctx, bridges.Message{Text: text, ReplyTo: t.replyTo}); err != nil {
				cv.log.Warn("post the text before a card", "err", err)
			}
		}
		t.live = liveMsg{}
		t.segs, t.streaming, t.toolSeg = nil, false, make(map[string]int)
	}
	if d := cv.profile.ApprovalTimeout; d > 0 {
		cv.after(d, timerApproval, cd.id) // counted from when the card shows
	}
	cv.auditRequest(ctx, store.Approval{
		ID: cd.id, ConversationID: cv.id, ToolName: cd.req.ToolName, Input: cd.req.Input,
		RequestedBy: strings.Join(authorIDs(cd.requesters), ","),
	})
	cv.budget.take(cv.core.clock.Now(), cv.limits.EditInterval, true)
	ref, err := cv.post(ctx, cd.message(cv.limits, cv.maxRunes()))
	if err != nil {
		cv.cancelTimer(timerApproval, cd.id)
		cv.log.Error("post approval card; denying the request", "request", cd.id, "err", err)
		msg := "The approval request could not be shown to the user (chat error), so the call was denied. Try again later."
		if cd.answersCLI() {
			cv.respond(ctx, cd.id, streamjson.Decision{Message: msg})
		}
		cv.audit(ctx, cd.id, store.DecisionDeny, "", msg)
		return
	}
	cd.ref, cd.posted = ref, true
	st, id, msgID := cv.core.st, cd.id, ref.ID
	cv.recordOrLog(ctx, "store card reference", func(ctx context.Context) error {
		return st.SetApprovalCardRef(ctx, id, encodeRef(ref), msgID)
	}, "request", id)
	cv.cards[cd.id] = cd
}

// onAction handles a click on one of this conversation's cards.
func (cv *conversation) onAction(ctx context.Context, a bridges.Action) {
	cd := cv.cards[a.CardID]
	if cd == nil {
		replyPrivately(ctx, cv.log, a, "This request is no longer open.")
		return
	}
	who := author{a.UserID, a.UserName}
	if !cv.mayDecide(cd, who.id) {
		cv.log.Info("click refused: not allowed to decide", "user", a.UserID, "card", cd.id)
		replyPrivately(ctx, cv.log, a, "Sorry, only "+names(cd.requesters)+", approvers or admins can answer this request.")
		return
	}
	var problem string
	switch cd.kind {
	case cardQuestion:
		problem = cv.clickQuestion(ctx, cd, a.Choice, who)
	case cardSchedule:
		problem = cv.decideSchedule(ctx, cd, a.Choice, who)
	default:
		problem = cv.decide(ctx, cd, a.Choice, who)
	}
	if problem != "" {
		replyPrivately(ctx, cv.log, a, problem)
	}
}

// mayDecide: the people whose messages started the turn, approvers, admins.
func (cv *conversation) mayDecide(cd *card, user string) bool {
	_, requester := cd.requesters[user]
	return requester || isApprover(cv.bot, user)
}

// retireCard shows how a card ended (no buttons) and forgets it. Where the
// card can no longer be edited, the status is posted as a new message
// quoting the card.
func (cv *conversation) retireCard(ctx context.Context, cd *card, status string) {
	delete(cv.cards, cd.id)
	cv.cancelTimer(timerApproval, cd.id)
	if !cd.posted {
		return
	}
	cv.budget.take(cv.core.clock.Now(), cv.limits.EditInterval, true)
	text := render.Truncate(render.DecidedText(cd.body, status), cv.maxRunes())
	instead := bridges.Message{Text: render.Truncate(status, cv.maxRunes()), ReplyTo: cd.ref.ID}
	if _, err := cv.editOrPost(ctx, cd.ref, bridges.Message{Text: text, CardID: cd.id}, instead); err != nil {
		cv.log.Warn("update decided card", "card", cd.id, "err", err)
	}
}

// closeCard ends a card without answering the CLI (it withdrew the request,
// or the process is gone).
func (cv *conversation) closeCard(ctx context.Context, id string, audit store.Decision, by, status string) {
	cd := cv.cards[id]
	if cd == nil {
		return
	}
	cv.audit(ctx, id, audit, by, status)
	cv.retireCard(ctx, cd, status)
}

// expireCard denies a card nobody answered within approval_timeout.
func (cv *conversation) expireCard(ctx context.Context, id string) {
	cd := cv.cards[id]
	if cd == nil {
		return
	}
	wait := render.FormatWait(cv.profile.ApprovalTimeout)
	msg := "Nobody approved this tool call within " + wait + " (the bridge's approval timeout), so it was denied. " +
		"Do not retry it now: tell the user what you wanted to do so they can approve it when they are back."
	switch cd.kind {
	case cardQuestion:
		msg = "The user did not answer within " + wait + ". Continue without the answer or ask again later."
	case cardSchedule:
		msg = "Nobody approved the schedule within " + wait + ", so none was created."
	}
	if cd.answersCLI() {
		cv.respond(ctx, id, streamjson.Decision{Message: msg})
	}
	cv.audit(ctx, id, store.DecisionTimeout, "", msg)
	cv.log.Info("permission request expired", "request", id, "after", wait)
	cv.retireCard(ctx, cd, "⌛ Expired: no answer within "+wait+".")
}

// expireAllCards closes every open card, e.g. when the process is gone.
func (cv *conversation) expireAllCards(ctx context.Context, status string) {
	ids := make([]string, 0, len(cv.cards))
	for id := range cv.cards {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		cv.closeCard(ctx, id, store.DecisionExpired, "", status)
	}
}

// requesters are the people who may decide the turn's requests besides the
// approvers: the deciders of the messages the turn handles (their authors;
// for a schedule's firing its creator when a person made it, else nobody).
// For a turn the agent started itself (after a background task): the
// deciders of the last message sent to it, and the conversation's owner
// only when that was a person's message or nothing was sent since the
// worker started.
func (cv *conversation) requesters() map[string]author {
	out := make(map[string]author)
	switch {
	case cv.turn != nil && (cv.turn.fromLedger || len(cv.turn.requesters) > 0):
		maps.Copy(out, cv.turn.requesters)
		return out
	case cv.lastSent != nil:
		maps.Copy(out, cv.lastSent.deciders())
		if cv.lastSent.origin != OriginPerson {
			return out
		}
	}
	if o := cv.row.OwnerUserID; o != "" {
		if _, ok := out[o]; !ok {
			out[o] = author{id: o}
		}
	}
	return out
}

// scheduledRun names the schedule whose run the current turn is ("" if
// none), for its cards.
func (cv *conversation) scheduledRun() string {
	switch {
	case cv.turn != nil && cv.turn.fromLedger:
		return cv.turn.scheduled
	case cv.lastSent != nil:
		return cv.lastSent.scheduledRun()
	}
	return ""
}

func authorIDs(m map[string]author) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// deciderText says who may decide a card besides nobody: its requesters,
// approvers and admins.
func deciderText(requesters map[string]author) string {
	if len(requesters) == 0 {
		return "only the bot's approvers and admins"
	}
	return names(requesters) + ", approvers and admins"
}

func names(m map[string]author) string {
	var ns []string
	for _, id := range authorIDs(m) {
		ns = append(ns, mention(m[id]))
	}
	if len(ns) == 0 {
		return "the requester"
	}
	return strings.Join(ns, ", ")
}

// encodeRef stores a card's message reference in the audit table, so a
// restarted bridge can close the card.
func encodeRef(ref bridges.MessageRef) string {
	b, err := json.Marshal(ref)
	if err != nil {
		return ""
	}
	return string(b)
}

func decodeRef(s string) (bridges.MessageRef, bool) {
	var ref bridges.MessageRef
	if s == "" || json.Unmarshal([]byte(s), &ref) != nil || ref.ID == "" {
		return bridges.MessageRef{}, false
	}
	return ref, true
}
