package bridges

import (
	"fmt"
	"strconv"
	"strings"
)

// ChoiceFromText maps a typed reply to one of a card's buttons, for
// platforms without buttons (where the adapter shows them as numbered
// choices in NumberOrder: 1 = yes, 2 = no, 3 = the lasting yes): a number
// picks that button; "yes", "ok",
// "allow", "approve" or 👍 the first primary button; "no", "deny",
// "reject" or 👎 the danger button; "always" the Always allow button. It
// returns the button's ID, or "" when the reply is no choice of these
// buttons.
func ChoiceFromText(buttons []Button, text string) string {
	s := strings.ToLower(strings.Trim(strings.TrimSpace(text), " .!\ufe0f"))
	if n, err := strconv.Atoi(s); err == nil {
		if ordered := NumberOrder(buttons); n >= 1 && n <= len(ordered) {
			return ordered[n-1].ID
		}
		return ""
	}
	find := func(ok func(Button) bool) string {
		for _, b := range buttons {
			if ok(b) {
				return b.ID
			}
		}
		return ""
	}
	switch strings.TrimRight(s, "\U0001F3FB\U0001F3FC\U0001F3FD\U0001F3FE\U0001F3FF") { // skin tones
	case "y", "yes", "ok", "allow", "approve", "👍":
		return find(func(b Button) bool { return b.Style == StylePrimary })
	case "n", "no", "deny", "reject", "👎":
		return find(func(b Button) bool { return b.Style == StyleDanger })
	case "always", "always allow":
		return find(func(b Button) bool { return b.ID == ChoiceAlways })
	}
	return ""
}

// NumberedChoices renders buttons as the numbered choices a reply picks
// with ChoiceFromText, in NumberOrder and CommonMark: "**1** Allow ·
// **2** Deny · **3** Always allow".
func NumberedChoices(buttons []Button) string {
	ordered := NumberOrder(buttons)
	parts := make([]string, len(ordered))
	for i, b := range ordered {
		parts[i] = fmt.Sprintf("**%d** %s", i+1, b.Label)
	}
	return strings.Join(parts, " · ")
}

// Button ids of cards. Adapters that map reactions or numbered replies to
// actions use these (e.g. 👍 → "allow", 👎 → "deny").
const (
	ChoiceAllow        = "allow"
	ChoiceAlways       = "always"
	ChoiceDeny         = "deny"
	ChoiceApprove      = "approve"
	ChoiceApproveEdits = "approve-edits"
	ChoiceReject       = "reject"
	ChoiceSubmit       = "submit"
	// ChoiceGood and ChoiceBad are the 👍 and 👎 of a streamed answer's
	// feedback buttons (StreamChunk.Feedback).
	ChoiceGood = "good"
	ChoiceBad  = "bad"
)

// CommandPrefix starts a chat command.
const CommandPrefix = "!"

// NumberOrder is the order in which a card's buttons are numbered where
// they are answered by number: the primary (yes) button first, the danger
// (no) button second, the others after them in their order. So the same
// digit means the same on every card: 1 Allow / Approve, 2 Deny / Reject,
// 3 Always allow / Approve + accept edits; a lasting grant is never one
// digit away from a refusal in the other direction.
func NumberOrder(buttons []Button) []Button {
	out := make([]Button, 0, len(buttons))
	for _, style := range []ButtonStyle{StylePrimary, StyleDanger} {
		for _, b := range buttons {
			if b.Style == style {
				out = append(out, b)
			}
		}
	}
	for _, b := range buttons {
		if b.Style != StylePrimary && b.Style != StyleDanger {
			out = append(out, b)
		}
	}
	return out
}
