package core

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/config"
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

func TestBudget(t *testing.T) {
	var b budget
	t0 := time.Unix(0, 0)
	iv := time.Second
	if w := b.take(t0, iv, false); w != 0 {
		t.Fatalf("first streaming edit waits %s", w)
	}
	if w := b.take(t0.Add(300*time.Millisecond), iv, false); w != 700*time.Millisecond {
		t.Fatalf("second edit within the interval waits %s, want 700ms", w)
	}
	if w := b.take(t0.Add(300*time.Millisecond), iv, true); w != 0 {
		t.Fatal("an urgent post must never wait")
	}
	// The urgent post pushed the next streaming slot back.
	if w := b.take(t0.Add(time.Second), iv, false); w != time.Second {
		t.Fatalf("streaming after an urgent post waits %s, want 1s", w)
	}
	if w := b.take(t0.Add(2*time.Second), iv, false); w != 0 {
		t.Fatalf("streaming after the slot waits %s", w)
	}
}

func TestTurnFinal(t *testing.T) {
	tr := newTurn(time.Now())
	tr.addDelta("Let me ")
	tr.addDelta("check.")
	tr.addText("Let me check.")
	tr.addTool(streamjson.ToolUse{ID: "1", Name: "Bash"}, "› `Bash: ls`")
	tr.addDelta("Done: 3 files.")
	activity, answer := tr.final("Done: 3 files.")
	if answer != "Done: 3 files." || render.Join(activity) != "Let me check.\n\n› `Bash: ls`" {
		t.Errorf("final = %q / %q", render.Join(activity), answer)
	}
	_, answer = tr.final("")
	if answer != "Done: 3 files." {
		t.Errorf("empty result text should fall back to the last block: %q", answer)
	}
}

// fileSettings stands in for the settings of an adapter that keeps a
// bot's credentials in a file (a WhatsApp device store).
type fileSettings struct{ file string }

func (s fileSettings) String() string        { return "files{" + s.file + "}" }
func (s fileSettings) Summary() string       { return "" }
func (s fileSettings) SecretFiles() []string { return []string{s.file} }

func TestSecretPaths(t *testing.T) {
	cfg := &config.Config{DataDir: "/srv/data", Path: "/etc/bridge.yaml", Bots: []*config.Bot{
		{Name: "s", Platform: "slack"},
		{Name: "p", Platform: "whatsapp", Settings: fileSettings{"/var/lib/wa/phone.db"}},
	}}
	got := secretPaths(cfg)
	want := []string{"/srv/data", "/etc/bridge.yaml", "/var/lib/wa/phone.db"}
	if !slices.Equal(got, want) {
		t.Errorf("secretPaths = %q, want %q", got, want)
	}
}
