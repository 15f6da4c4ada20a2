package core_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
)

// TestCardAfterItsIntroduction: on a quick turn the agent writes a sentence
// and asks for a tool before the live message's first post is due (one
// edit interval). The sentence must still be shown above the card, as the
// agent wrote them, and what the agent writes after the decision below it.
func TestCardAfterItsIntroduction(t *testing.T) {
	script := func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted})
		s.Emit(streamjson.TextDelta{Text: "I will run the tests first."})
		s.Emit(streamjson.AssistantText{Text: "I will run the tests first."})
		input, _ := json.Marshal(map[string]any{"command": "make test"})
		s.Emit(streamjson.ToolUse{ID: "tu-1", Name: "Bash", Input: input})
		s.Ask(streamjson.PermissionRequest{RequestID: "req-order", ToolName: "Bash", Input: input, ToolUseID: "tu-1"})
		s.Emit(streamjson.TextDelta{Text: "All tests pass."})
		s.Emit(streamjson.AssistantText{Text: "All tests pass."})
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleCompleted})
		s.Emit(streamjson.Result{Subtype: "success", Text: "All tests pass.", Duration: 20 * time.Millisecond, NumTurns: 1})
	}
	lim := defaultLimits()
	lim.EditInterval = 2 * time.Second // the card comes long before the live message's first post
	h := start(t, setup{script: script, limits: lim})
	k := key("T1")
	h.send(k, "m1", "alice", "run the tests")
	card := h.waitCard(k, "make test")
	index := func(sub string) int {
		for i, m := range h.plat.Messages(k) {
			if strings.Contains(m.Text, sub) {
				return i
			}
		}
		return -1
	}
	intro, at := index("I will run the tests first."), index("make test")
	if intro < 0 || intro > at {
		t.Fatalf("the introducing sentence is at %d, the card at %d; want the sentence above the card:\n%s", intro, at, h.plat.Dump())
	}
	if _, err := h.plat.Click(ctxT(t), k, card.CardID, bridges.ChoiceAllow, "alice", "alice"); err != nil {
		t.Fatal(err)
	}
	h.waitText(k, "All tests pass.")
	if after := index("All tests pass."); after < at {
		t.Errorf("the text after the decision is at %d, above the card at %d:\n%s", after, at, h.plat.Dump())
	}
	if n := strings.Count(h.plat.Dump(), "I will run the tests first."); n != 1 {
		t.Errorf("the introducing sentence shows %d times, want once:\n%s", n, h.plat.Dump())
	}
}
