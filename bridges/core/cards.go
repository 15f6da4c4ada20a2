package core

import (
	"encoding/json"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/config/policy"
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
	grants      []policy.Rule     // what "Always allow" stores for the conversation (see grants.AlwaysPermissions)
	questions   []render.Question // cardQuestion
	picked      [][]bool          // cardQuestion: selected options per question
	schedule    *scheduleRequest  // cardSchedule: what approving it creates
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
		return render.QuestionButtons(cd.questions, cd.picked)
	default:
		return render.PermissionButtons(cd.always != nil)
	}
}

// needsSubmit: one click cannot answer the card, so clicks toggle and
// Submit answers (render.NeedsSubmit).
func (cd *card) needsSubmit() bool { return render.NeedsSubmit(cd.questions) }
