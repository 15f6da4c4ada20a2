package slack

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// A stream in a thread: started for the asking user, grown with text and
// tasks, stopped with the last text, in three calls.
func TestStreamInThread(t *testing.T) {
	e := startOnFake(t)
	root := e.fake.Mention("C1", "U1", "go", "")
	e.waitAcked(t, root)
	key := threadKey(root)
	s, err := e.b.StartStream(t.Context(), key, root, "U1", []bridges.StreamChunk{{Text: "Let me **look**."}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append(t.Context(), []bridges.StreamChunk{
		{Task: &bridges.StreamTask{ID: "t1", Title: "Bash: git status", Status: bridges.TaskRunning}},
		{Text: "\n\nAll "}, {Text: "clean."},
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(t.Context(), []bridges.StreamChunk{
		{Task: &bridges.StreamTask{ID: "t1", Title: "Bash: git status", Status: bridges.TaskComplete}}, {Text: "\n\n_1.0s_"},
	}); err != nil {
		t.Fatal(err)
	}
	m, _ := e.fake.Current("C1", s.Ref().ID)
	if m.Text != "Let me **look**.\n\nAll clean.\n\n_1.0s_" || m.Stream != slackfake.StreamStopped || m.ThreadTS != root || m.Recipient != "U1" {
		t.Errorf("streamed message = %+v", m)
	}
	if len(m.Tasks) != 1 || m.Tasks[0].Status != "complete" || m.Tasks[0].Title != "Bash: git status" {
		t.Errorf("tasks = %+v", m.Tasks)
	}
	for _, method := range []string{"chat.startStream", "chat.appendStream", "chat.stopStream"} {
		if n := e.fake.CallCount(method); n != 1 {
			t.Errorf("%d %s calls, want 1", n, method)
		}
	}
	if n := e.fake.CallCount("chat.postMessage") + e.fake.CallCount("chat.update"); n != 0 {
		t.Errorf("%d posts or updates while streaming", n)
	}
}

// More text than Slack takes in one call goes in several; none is lost.
func TestStreamSplitsLongText(t *testing.T) {
	e := startOnFake(t)
	root := e.fake.Mention("C1", "U1", "go", "")
	e.waitAcked(t, root)
	s, err := e.b.StartStream(t.Context(), threadKey(root), root, "U1", nil)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("é", 30000)
	if err := s.Append(t.Context(), []bridges.StreamChunk{{Text: long}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if n := e.fake.CallCount("chat.appendStream"); n != 3 {
		t.Errorf("%d appendStream calls for 30,000 characters, want 3", n)
	}
	if m, _ := e.fake.Current("C1", s.Ref().ID); m.Text != long {
		t.Errorf("streamed %d runes, want %d", len([]rune(m.Text)), len([]rune(long)))
	}
}

// Where Slack refuses to stream, the refusal is remembered: the next
// attempt there is refused without a call. Top-level channel messages are
// never streamed.
func TestStreamRefusalIsRemembered(t *testing.T) {
	e := startOnFake(t)
	e.fake.FailMethod("chat.startStream", "channel_type_not_supported", -1)
	root := e.fake.Mention("C1", "U1", "go", "")
	e.waitAcked(t, root)
	for range 2 {
		if _, err := e.b.StartStream(t.Context(), threadKey(root), root, "U1", nil); !errors.Is(err, bridges.ErrStreamRefused) {
			t.Fatalf("StartStream = %v, want ErrStreamRefused", err)
		}
	}
	if n := e.fake.CallCount("chat.startStream"); n != 1 {
		t.Errorf("%d startStream calls, want 1 (the refusal is remembered)", n)
	}
	top := bridges.ConversationKey{Bot: "team", Channel: "C2"}
	if _, err := e.b.StartStream(t.Context(), top, "", "U1", nil); !errors.Is(err, bridges.ErrStreamRefused) {
		t.Errorf("top-level channel stream = %v, want ErrStreamRefused", err)
	}
}

// A top-level DM streams without a thread or recipient.
func TestStreamInDM(t *testing.T) {
	e := startOnFake(t)
	ts := e.fake.SendMessage("D1", "U1", "hi", "")
	e.waitAcked(t, ts)
	s, err := e.b.StartStream(t.Context(), bridges.ConversationKey{Bot: "team", Channel: "D1"}, ts, "U1", []bridges.StreamChunk{{Text: "hello"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if m, _ := e.fake.Current("D1", s.Ref().ID); m.Text != "hello" || m.ThreadTS != "" {
		t.Errorf("DM stream = %+v", m)
	}
}

// The stream is a reply: it clears the thread status, so clearing the
// status afterwards costs no call.
func TestStreamClearsThreadStatus(t *testing.T) {
	e := startOnFake(t)
	root := e.fake.Mention("C1", "U1", "go", "")
	e.waitAcked(t, root)
	key := threadKey(root)
	if err := e.b.SetTyping(t.Context(), key, true); err != nil {
		t.Fatal(err)
	}
	s, err := e.b.StartStream(t.Context(), key, root, "U1", []bridges.StreamChunk{{Text: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if err := e.b.SetTyping(t.Context(), key, false); err != nil {
		t.Fatal(err)
	}
	if n := e.fake.CallCount("assistant.threads.setStatus"); n != 1 {
		t.Errorf("%d setStatus calls, want 1", n)
	}
}

// A stream that opens with a plan is shown as a plan (task_display_mode
// plan, a plan_update and its tasks); the stop carries the feedback
// buttons, and a 👎 click reaches HandleAction as the feedback card's
// choice.
func TestStreamPlanAndFeedback(t *testing.T) {
	e := startOnFake(t)
	root := e.fake.Mention("C1", "U1", "go", "")
	e.waitAcked(t, root)
	key := threadKey(root)
	plan := &bridges.StreamPlan{Title: "Plan · 0 of 2 done", Tasks: []bridges.StreamTask{
		{ID: "plan-1", Title: "Read the code", Status: bridges.TaskRunning},
		{ID: "plan-2", Title: "Fix the bug", Status: bridges.TaskPending},
	}}
	s, err := e.b.StartStream(t.Context(), key, root, "U1", []bridges.StreamChunk{{Plan: plan}, {Text: "Working."}})
	if err != nil {
		t.Fatal(err)
	}
	done := *plan
	done.Title = "Plan · 2 of 2 done"
	done.Tasks = []bridges.StreamTask{{ID: "plan-1", Title: "Read the code", Status: bridges.TaskComplete}, {ID: "plan-2", Title: "Fix the bug", Status: bridges.TaskComplete}}
	if err := s.Stop(t.Context(), []bridges.StreamChunk{{Plan: &done}, {Text: " Done."}, {Feedback: "fb:reply-1"}}); err != nil {
		t.Fatal(err)
	}
	m, _ := e.fake.Current("C1", s.Ref().ID)
	if m.TaskDisplayMode != "plan" || m.Plan != "Plan · 2 of 2 done" || len(m.Tasks) != 2 || m.Tasks[1].Status != "complete" || m.Text != "Working. Done." {
		t.Fatalf("streamed message = %+v", m)
	}
	if m.Feedback == nil || m.Feedback.BlockID != "feedback:fb:reply-1" {
		t.Fatalf("feedback buttons = %+v", m.Feedback)
	}
	e.fake.ClickFeedback("C1", s.Ref().ID, "U2", false)
	testkit.WaitUntil(t, "feedback click", 5*time.Second, func() bool { return len(e.h.actionList()) == 1 })
	if a := e.h.actionList()[0]; a.CardID != "fb:reply-1" || a.Choice != bridges.ChoiceBad || a.UserID != "U2" || a.Key != key {
		t.Errorf("action = %+v", a)
	}

	// Without a plan the tasks are a timeline.
	s2, err := e.b.StartStream(t.Context(), key, root, "U1", []bridges.StreamChunk{{Text: "Hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := e.fake.Current("C1", s2.Ref().ID); m.TaskDisplayMode != "timeline" {
		t.Errorf("task_display_mode without a plan = %q", m.TaskDisplayMode)
	}
}

// A streamed reply whose chat.stopStream reached Slack but whose answer
// was lost: the stop carried the reply's key (metadata), a second stop
// says permanently that the stream is no longer open, and the reply
// posted as a retry finds the streamed message: the answer shows once,
// in the stream's message. A stop that never reached Slack is simply
// made again.
func TestStreamStopReplyLostAnswerShowsOnce(t *testing.T) {
	for _, status := range []int{0, 502} {
		e := startOnFake(t)
		root := e.fake.Mention("C1", "U1", "go", "")
		e.waitAcked(t, root)
		key := threadKey(root)
		s, err := e.b.StartStream(t.Context(), key, root, "U1", []bridges.StreamChunk{{Text: "The answer"}})
		if err != nil {
			t.Fatal(err)
		}
		rs, ok := s.(bridges.ReplyStopper)
		if !ok {
			t.Fatal("a Slack stream cannot stop with a reply's key")
		}
		const idem = "0b8e6a52-5d1e-4c57-9a65-3c9d2f1e7a10"
		last := []bridges.StreamChunk{{Text: " is 42."}, {Feedback: "feedback:" + idem}}
		e.fake.LoseResponses("chat.stopStream", 1, status)
		if err := rs.StopReply(t.Context(), last, idem); err == nil || bridges.IsPermanent(err) {
			t.Fatalf("status %d: stop with its answer lost: %v, want a transient error", status, err)
		}
		if err := rs.StopReply(t.Context(), last, idem); !bridges.IsPermanent(err) {
			t.Fatalf("status %d: second stop of a stopped stream: %v, want a permanent error", status, err)
		}
		ref, err := e.b.Post(t.Context(), key, bridges.Message{Text: "The answer is 42.", Idem: idem, Retry: true})
		if err != nil {
			t.Fatal(err)
		}
		if n := e.fake.CallCount("chat.postMessage"); n != 0 {
			t.Errorf("status %d: the streamed answer was posted again (%d posts)", status, n)
		}
		m, _ := e.fake.Current("C1", s.Ref().ID)
		if ref.ID != s.Ref().ID || m.Stream != slackfake.StreamStopped || m.Text != "The answer is 42." {
			t.Errorf("status %d: ref %+v, streamed message %+v", status, ref, m)
		}
	}

	e := startOnFake(t)
	root := e.fake.Mention("C1", "U1", "go", "")
	e.waitAcked(t, root)
	s, err := e.b.StartStream(t.Context(), threadKey(root), root, "U1", []bridges.StreamChunk{{Text: "The answer"}})
	if err != nil {
		t.Fatal(err)
	}
	e.fake.FailMethod("chat.stopStream", "internal_error", 1)
	rs := s.(bridges.ReplyStopper)
	if err := rs.StopReply(t.Context(), nil, "k2"); err == nil || bridges.IsPermanent(err) {
		t.Fatalf("failed stop: %v, want a transient error", err)
	}
	if err := rs.StopReply(t.Context(), nil, "k2"); err != nil {
		t.Fatalf("stop again: %v", err)
	}
	if m, _ := e.fake.Current("C1", s.Ref().ID); m.Stream != slackfake.StreamStopped || m.Metadata == nil || m.Metadata.EventPayload["idem"] != "k2" {
		t.Errorf("stopped stream %+v, want it stopped with the reply's key", m)
	}
}

// CloseStream ends a stream an earlier run left open, with the note; a
// stream already ended is nothing to close.
func TestCloseStream(t *testing.T) {
	e := startOnFake(t)
	root := e.fake.Mention("C1", "U1", "go", "")
	e.waitAcked(t, root)
	s, err := e.b.StartStream(t.Context(), threadKey(root), root, "U1", []bridges.StreamChunk{{Text: "Half an ans"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.b.CloseStream(t.Context(), s.Ref(), "\n\n_(interrupted)_"); err != nil {
		t.Fatal(err)
	}
	m, _ := e.fake.Current("C1", s.Ref().ID)
	if m.Stream != slackfake.StreamStopped || m.Text != "Half an ans\n\n_(interrupted)_" {
		t.Errorf("closed stream %+v", m)
	}
	if err := e.b.CloseStream(t.Context(), s.Ref(), "again"); err != nil {
		t.Errorf("closing an ended stream: %v, want nothing to do", err)
	}
	if m, _ := e.fake.Current("C1", s.Ref().ID); strings.Contains(m.Text, "again") {
		t.Errorf("an ended stream changed: %q", m.Text)
	}
}
