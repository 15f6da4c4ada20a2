package cards

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/render"
	"github.com/agentbridge/agentbridge/bridges/core/toolconv"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/config/policy"
)

// cardKind says what a card asks.
type cardKind int

const (
	cardPermission cardKind = iota // may the tool run?
	cardQuestion                   // AskUserQuestion
	cardPlan                       // ExitPlanMode
	cardApproval                   // something a feature asks people to approve for the agent (approval.go); the CLI waits for nothing
)

// card is an open permission request shown in the thread.
type card struct {
	id          string // CardID; the CLI's request id
	seq         int    // opening order within the conversation
	kind        cardKind
	req         streamjson.PermissionRequest
	ref         bridges.MessageRef
	posted      bool
	requesters  map[string]worker.Person
	body        string            // the readable request, without choices or status
	always      []json.RawMessage // updatedPermissions for "Always allow"; nil = no such button
	alwaysLabel string
	grants      []policy.Rule      // what "Always allow" stores for the conversation (see grants.AlwaysPermissions)
	questions   []render.Question  // cardQuestion
	picked      [][]bool           // cardQuestion: selected options per question
	approval    *toolconv.Approval // cardApproval: what deciding it does
	intro       string             // cardQuestion: text above the questions (an elicitation's server and message)
	elicit      *render.ElicitForm // cardQuestion showing an MCP elicitation (elicit.go); nil for AskUserQuestion
}

// answersCLI reports whether the CLI waits for the card's decision (every
// card but an approval a feature asks for).
func (cd *card) answersCLI() bool { return cd.kind != cardApproval }

// message renders the open card (render.CardMessage); a permission card
// notes what Always allow does. It carries the card's Idem
// (delivery.CardIdem of conversation conv), so that a holder taking over can
// find a card whose reference was never stored and close it.
func (cd *card) message(conv string, lim bridges.Limits, maxRunes int) bridges.Message {
	c := render.Card{ID: cd.id, Body: cd.body, Buttons: cd.buttons()}
	switch cd.kind {
	case cardPermission:
		c.Note = cd.alwaysLabel
	case cardQuestion:
		c.Questions = cd.questions
	}
	m := render.CardMessage(c, lim, maxRunes)
	m.Idem = delivery.CardIdem(conv, cd.id)
	return m
}

// buttons are the card's choices.
func (cd *card) buttons() []bridges.Button {
	switch cd.kind {
	case cardPlan:
		return render.PlanButtons()
	case cardApproval:
		return cd.approval.Buttons
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

func authorIDs(m map[string]worker.Person) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// deciderText says who may decide a card besides nobody: its requesters,
// approvers and admins.
func deciderText(requesters map[string]worker.Person) string {
	if len(requesters) == 0 {
		return "only the bot's approvers and admins"
	}
	return names(requesters) + ", approvers and admins"
}

func names(m map[string]worker.Person) string {
	var ns []string
	for _, id := range authorIDs(m) {
		ns = append(ns, mention(m[id]))
	}
	if len(ns) == 0 {
		return "the requester"
	}
	return strings.Join(ns, ", ")
}
