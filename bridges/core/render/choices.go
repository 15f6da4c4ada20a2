package render

import (
	"strconv"
	"strings"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/internal/textcut"
)

// Card is what an open card shows: its body, a note under it, and its
// choices.
type Card struct {
	ID        string
	Body      string
	Note      string // a line under the body, in italics ("" for none)
	Buttons   []bridges.Button
	Questions []Question // a question card's questions; nil for other cards
}

// CardMessage renders an open card. A platform without buttons gets a
// permission or plan card's buttons all the same: it shows them as
// numbered choices and reads replies with ChoiceFromText. Question cards
// there (answered by text, options numbered in the body) and cards with
// more buttons than the platform shows list the choices in the text.
func CardMessage(c Card, lim bridges.Limits, maxRunes int) bridges.Message {
	question := c.Questions != nil
	buttons := c.Buttons
	useButtons := lim.CanButtons && (lim.MaxButtons <= 0 || len(buttons) <= lim.MaxButtons) ||
		!lim.CanButtons && !question
	text := c.Body
	if c.Note != "" {
		text += "\n_" + c.Note + "_"
	}
	switch {
	case !useButtons && question:
		text += "\n\n" + QuestionReplyHint(c.Questions)
		buttons = nil
	case !useButtons:
		text += "\n\n" + "Reply " + bridges.NumberedChoices(buttons) + "."
		buttons = nil
	case question:
		text += "\n_Or type your own answer: your next message answers this question._"
	}
	return bridges.Message{Text: textcut.Truncate(text, maxRunes), CardID: c.ID, Buttons: buttons}
}

// PermissionButtons are a permission card's choices: Allow, Always allow
// (when always), Deny.
func PermissionButtons(always bool) []bridges.Button {
	bs := []bridges.Button{{ID: bridges.ChoiceAllow, Label: "Allow", Style: bridges.StylePrimary}}
	if always {
		bs = append(bs, bridges.Button{ID: bridges.ChoiceAlways, Label: "Always allow"})
	}
	return append(bs, bridges.Button{ID: bridges.ChoiceDeny, Label: "Deny", Style: bridges.StyleDanger})
}

// PlanButtons are a plan card's choices.
func PlanButtons() []bridges.Button {
	return []bridges.Button{
		{ID: bridges.ChoiceApprove, Label: "Approve", Style: bridges.StylePrimary},
		{ID: bridges.ChoiceApproveEdits, Label: "Approve + accept edits"},
		{ID: bridges.ChoiceReject, Label: "Reject", Style: bridges.StyleDanger},
	}
}

// ScheduleButtons are the choices of a card for a schedule the agent asks
// for.
func ScheduleButtons() []bridges.Button {
	return []bridges.Button{
		{ID: bridges.ChoiceAllow, Label: "Create schedule", Style: bridges.StylePrimary},
		{ID: bridges.ChoiceDeny, Label: "Refuse", Style: bridges.StyleDanger},
	}
}

// IsChoiceText reports whether text reads as a choice on some card: a
// number, or a word ChoiceFromText knows.
func IsChoiceText(text string) bool {
	if _, err := strconv.Atoi(strings.Trim(strings.TrimSpace(text), " .!")); err == nil {
		return true
	}
	all := append(PermissionButtons(true), PlanButtons()...)
	return bridges.ChoiceFromText(all, text) != ""
}
