package bridges_test

import (
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
)

// TestChoiceNumbers: a numbered answer counts the buttons in NumberOrder
// (primary, danger, the rest), so "2" is the refusal on every card and a
// lasting grant is never one digit away from it.
func TestChoiceNumbers(t *testing.T) {
	buttons := []bridges.Button{
		{ID: bridges.ChoiceAllow, Label: "Allow", Style: bridges.StylePrimary},
		{ID: bridges.ChoiceAlways, Label: "Always allow"},
		{ID: bridges.ChoiceDeny, Label: "Deny", Style: bridges.StyleDanger},
	}
	for in, want := range map[string]string{"1": bridges.ChoiceAllow, "2": bridges.ChoiceDeny, "3": bridges.ChoiceAlways, "4": ""} {
		if got := bridges.ChoiceFromText(buttons, in); got != want {
			t.Errorf("ChoiceFromText(%q) = %q, want %q", in, got, want)
		}
	}
}
