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

// cardMessage renders an open card. A platform without buttons gets a
// permission or plan card's buttons all the same: it shows them as
// numbered choices and reads replies with ChoiceFromText. Question cards
// there (answered by text, options numbered in the body) and cards with
// more buttons than the platform shows list the choices in the text.
func (cd *card) message(lim bridges.Limits, maxRunes int) bridges.Message {
	buttons := cd.buttons()
	useButtons := lim.CanButtons && (lim.MaxButtons <= 0 || len(buttons) <= lim.MaxButtons) ||
		!lim.CanButtons && cd.kind != cardQuestion
	text := cd.body
	if cd.kind == cardPermission && cd.alwaysLabel != "" {
		text += "\n_" + cd.alwaysLabel + "_"
	}
	if !useButtons {
		text += "\n\n" + cd.textChoices()
		buttons = nil
	} else if cd.kind == cardQuestion {
		text += "\n_Or type your own answer: your next message answers this question._"
	}
	return bridges.Message{Text: render.Truncate(text, maxRunes), CardID: cd.id, Buttons: buttons}
}

// buttons are the card's choices.
func (cd *card) buttons() []bridges.Button {
	switch cd.kind {
	case cardPlan:
		return []bridges.Button{
			{ID: bridges.ChoiceApprove, Label: "Approve", Style: bridges.StylePrimary},
			{ID: bridges.ChoiceApproveEdits, Label: "Approve + accept edits"},
			{ID: bridges.ChoiceReject, Label: "Reject", Style: bridges.StyleDanger},
		}
	case cardSchedule:
		return []bridges.Button{
			{ID: bridges.ChoiceAllow, Label: "Create schedule", Style: bridges.StylePrimary},
			{ID: bridges.ChoiceDeny, Label: "Refuse", Style: bridges.StyleDanger},
		}
	case cardQuestion:
		return render.QuestionButtons(cd.questions, cd.picked)
	default:
		bs := []bridges.Button{{ID: bridges.ChoiceAllow, Label: "Allow", Style: bridges.StylePrimary}}
		if cd.always != nil {
			bs = append(bs, bridges.Button{ID: bridges.ChoiceAlways, Label: "Always allow"})
		}
		return append(bs, bridges.Button{ID: bridges.ChoiceDeny, Label: "Deny", Style: bridges.StyleDanger})
	}
}

// needsSubmit: one click cannot answer the card, so clicks toggle and
// Submit answers (render.NeedsSubmit).
func (cd *card) needsSubmit() bool { return render.NeedsSubmit(cd.questions) }

// textChoices explains how to answer by replying, when the card's
// choices are not shown as buttons.
func (cd *card) textChoices() string {
	if cd.kind != cardQuestion {
		return "Reply " + bridges.NumberedChoices(cd.buttons()) + "."
	}
	return render.QuestionReplyHint(cd.questions)
}
