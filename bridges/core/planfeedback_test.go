package core_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// planScript plans with TodoWrite, creates and updates a task with
// TaskCreate/TaskUpdate, runs one tool, then answers; each step waits for
// step.
func planScript(step chan struct{}) bridgetest.Script {
	return func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted})
		s.Emit(streamjson.ToolUse{ID: "todo1", Name: "TodoWrite", Input: json.RawMessage(
			`{"todos":[{"content":"Read  the\ncode","status":"in_progress","activeForm":"Reading"},{"content":"Fix it","status":"pending","activeForm":"Fixing"}]}`)})
		s.Emit(streamjson.ToolResult{ToolUseID: "todo1", Content: "Todos have been modified"})
		<-step
		s.Emit(streamjson.ToolUse{ID: "bash1", Name: "Bash", Input: json.RawMessage(`{"command":"go test"}`)})
		s.Emit(streamjson.ToolResult{ToolUseID: "bash1", Content: "ok"})
		s.Emit(streamjson.ToolUse{ID: "todo2", Name: "TodoWrite", Input: json.RawMessage(
			`{"todos":[{"content":"Read the code","status":"completed"},{"content":"Fix it","status":"completed"}]}`)})
		<-step
		s.Emit(streamjson.TextDelta{Text: "Fixed."})
		s.Emit(streamjson.AssistantText{Text: "Fixed."})
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleCompleted})
		s.Emit(streamjson.Result{Subtype: "success", Text: "Fixed.", Duration: 3 * time.Second})
	}
}

// A TodoWrite is the stream's plan (its tasks by position, not a tool
// task of its own), replaced by the next one; the answer that ends the
// stream carries feedback buttons.
func TestStreamShowsPlanAndFeedback(t *testing.T) {
	step := make(chan struct{})
	h, sp, clock := streamingSetup(t, planScript(step))
	k := key("T1")
	h.send(k, "m1", "alice", "fix it")
	h.session(1)
	testkit.WaitUntil(t, "the turn's timers", waitTimeout, func() bool { return clock.Pending() >= 1 })
	clock.Advance(time.Second)
	h.plat.WaitFor(t, k, waitTimeout, "the plan", func(m bridgetest.Msg) bool {
		return strings.Contains(m.Text, "[plan] Plan · 0 of 2 done\n[in_progress] Read the code\n[pending] Fix it")
	})
	if st := sp.Starts(); len(st) != 1 {
		t.Fatalf("streams = %+v", st)
	}
	step <- struct{}{}
	testkit.WaitUntil(t, "the next flush", waitTimeout, func() bool { return clock.Pending() >= 1 })
	clock.Advance(time.Second)
	step <- struct{}{}
	final := h.waitText(k, "Fixed.")
	final = h.plat.WaitFor(t, k, waitTimeout, "the feedback buttons", func(m bridgetest.Msg) bool { return strings.Contains(m.Text, "[feedback ") })
	for _, want := range []string{"[plan] Plan · 2 of 2 done\n[complete] Read the code\n[complete] Fix it", "[complete] Bash: go test"} {
		if !strings.Contains(final.Text, want) {
			t.Errorf("final stream lacks %q:\n%s", want, final.Text)
		}
	}
	if strings.Contains(final.Text, "TodoWrite") {
		t.Errorf("TodoWrite shown as a tool task:\n%s", final.Text)
	}
	h.waitOutboxEmpty()
}

// feedbackCard is the CardID of the feedback buttons in a stream's text.
func feedbackCard(t *testing.T, text string) string {
	t.Helper()
	m := regexp.MustCompile(`\[feedback ([^\]]+)\]`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no feedback buttons in %q", text)
	}
	return m[1]
}

// A click on the feedback buttons is recorded per answer and person by
// anyone allowed in the conversation (a second click replaces the first);
// a stranger is refused privately, a click naming another conversation's
// answer or an unknown one records nothing.
func TestFeedbackClicks(t *testing.T) {
	step := make(chan struct{})
	clock := bridgetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	lim := defaultLimits()
	lim.EditInterval = time.Second
	plat := bridgetest.New(lim)
	plat.SetClock(clock.Now)
	sp := bridgetest.WithStreams(plat)
	h := start(t, setup{script: planScript(step), clock: clock, streaming: sp, limits: lim, statusDelay: time.Second,
		access: config.Access{Users: []string{"alice", "bob"}}})
	k := key("T1")
	h.send(k, "m1", "alice", "fix it")
	h.session(1)
	testkit.WaitUntil(t, "the turn's timers", waitTimeout, func() bool { return clock.Pending() >= 1 })
	clock.Advance(time.Second)
	step <- struct{}{}
	testkit.WaitUntil(t, "the next flush", waitTimeout, func() bool { return clock.Pending() >= 1 })
	clock.Advance(time.Second)
	step <- struct{}{}
	final := h.plat.WaitFor(t, k, waitTimeout, "the feedback buttons", func(m bridgetest.Msg) bool { return strings.Contains(m.Text, "[feedback ") })
	card := feedbackCard(t, final.Text)

	click := func(key bridges.ConversationKey, card, choice, user string) *bridgetest.Clicked {
		t.Helper()
		c, err := h.plat.Click(ctxT(t), key, card, choice, user, user)
		if err != nil {
			t.Fatalf("click: %v", err)
		}
		return c
	}
	if r := click(k, card, bridges.ChoiceGood, "mallory").WaitReply(t, waitTimeout); !strings.Contains(r, "cannot rate") {
		t.Errorf("stranger's reply = %q", r)
	}
	click(k, card, bridges.ChoiceGood, "bob") // bob did not write here: allowed in the conversation is enough
	click(k, card, bridges.ChoiceGood, "alice")
	click(k, card, bridges.ChoiceBad, "alice")
	click(key("T2"), card, bridges.ChoiceBad, "bob") // the answer is not T2's
	click(k, card, "meh", "bob")
	if r := click(k, "feedback:no-such-reply", bridges.ChoiceGood, "bob").WaitReply(t, waitTimeout); !strings.Contains(r, "too old") {
		t.Errorf("unknown answer's reply = %q", r)
	}
	got, err := h.st.RecentFeedback(ctxT(t), 10)
	if err != nil {
		t.Fatal(err)
	}
	ratings := map[string]string{}
	for _, f := range got {
		ratings[f.UserID] = string(f.Rating)
		if "feedback:"+f.ReplyID != card || f.Key.Thread != "T1" {
			t.Errorf("feedback %+v, want on %s in T1", f, card)
		}
	}
	if len(got) != 2 || ratings["alice"] != "bad" || ratings["bob"] != "good" {
		t.Errorf("recorded feedback = %+v, want alice bad, bob good", got)
	}
}
