package cards

import (
	"encoding/json"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
)

func TestChoiceFromText(t *testing.T) {
	full := (&card{kind: cardPermission, always: []json.RawMessage{}}).buttons()
	short := (&card{kind: cardPermission}).buttons() // no Always allow
	plan := (&card{kind: cardPlan}).buttons()
	tests := []struct {
		buttons []bridges.Button
		in      string
		want    string
	}{
		{full, "1", bridges.ChoiceAllow}, {full, "Yes", bridges.ChoiceAllow}, {full, "yes!", bridges.ChoiceAllow}, {full, "👍🏽", bridges.ChoiceAllow},
		{full, "3", bridges.ChoiceAlways}, {full, "always", bridges.ChoiceAlways}, {full, "2", bridges.ChoiceDeny}, {full, "No.", bridges.ChoiceDeny},
		{full, "deny", bridges.ChoiceDeny}, {full, "👎", bridges.ChoiceDeny}, {full, "maybe", ""}, {full, "12", ""}, {full, "0", ""},
		{short, "2", bridges.ChoiceDeny}, {short, "3", ""}, {short, "always", ""}, {short, "no", bridges.ChoiceDeny},
		{plan, "1", bridges.ChoiceApprove}, {plan, "3", bridges.ChoiceApproveEdits}, {plan, "2", bridges.ChoiceReject}, {plan, "ok", bridges.ChoiceApprove},
		{plan, "reject", bridges.ChoiceReject},
	}
	for _, tt := range tests {
		if got := bridges.ChoiceFromText(tt.buttons, tt.in); got != tt.want {
			t.Errorf("ChoiceFromText(%v, %q) = %q, want %q", tt.buttons, tt.in, got, tt.want)
		}
	}
	if got := bridges.NumberedChoices(short); got != "**1** Allow · **2** Deny" {
		t.Errorf("NumberedChoices = %q", got)
	}
	// The same digit means the same on every card (issue 24, finding 2).
	if got := bridges.NumberedChoices(full); got != "**1** Allow · **2** Deny · **3** Always allow" {
		t.Errorf("NumberedChoices = %q", got)
	}
	if got := bridges.NumberedChoices(plan); got != "**1** Approve · **2** Reject · **3** Approve + accept edits" {
		t.Errorf("NumberedChoices = %q", got)
	}
}
