package slack

import (
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
)

func TestTypingUsesThreadStatus(t *testing.T) {
	e := startOnFake(t)
	root := e.fake.Mention("C1", "U1", "go", "")
	e.waitAcked(t, root)
	key := threadKey(root)
	if err := e.b.SetTyping(t.Context(), key, true); err != nil {
		t.Fatal(err)
	}
	if err := e.b.SetTyping(t.Context(), key, false); err != nil {
		t.Fatal(err)
	}
	st := e.fake.Statuses()
	if len(st) != 2 || st[0].Status != workingStatus || st[1].Status != "" || st[0].ThreadTS != root || st[0].Channel != "C1" {
		t.Errorf("statuses = %+v", st)
	}
	if r := e.fake.Reactions(); len(r) != 0 {
		t.Errorf("reactions = %+v, want none", r)
	}
}

// Where Slack refuses thread statuses the adapter marks the latest
// message with an hourglass instead, and remembers the refusal.
func TestTypingFallsBackToReaction(t *testing.T) {
	e := startOnFake(t)
	e.fake.FailMethod("assistant.threads.setStatus", "channel_type_not_supported", -1)
	root := e.fake.Mention("C1", "U1", "go", "")
	e.waitAcked(t, root)
	follow := e.fake.SendMessage("C1", "U1", "and this", root)
	e.waitAcked(t, follow)
	key := threadKey(root)
	for range 2 {
		if err := e.b.SetTyping(t.Context(), key, true); err != nil {
			t.Fatal(err)
		}
		if !e.fake.HasReaction("C1", follow, workingReaction) {
			t.Fatalf("no %s on the latest message; reactions %+v", workingReaction, e.fake.Reactions())
		}
		if err := e.b.SetTyping(t.Context(), key, false); err != nil {
			t.Fatal(err)
		}
		if e.fake.HasReaction("C1", follow, workingReaction) {
			t.Fatal("reaction not removed")
		}
	}
	if n := e.fake.CallCount("assistant.threads.setStatus"); n != 1 {
		t.Errorf("%d setStatus calls, want 1 (the refusal is remembered)", n)
	}
}

func TestTypingTopLevelDMUsesReaction(t *testing.T) {
	e := startOnFake(t)
	ts := e.fake.SendMessage("D1", "U1", "hi", "")
	e.waitAcked(t, ts)
	key := bridges.ConversationKey{Bot: "team", Channel: "D1"}
	if err := e.b.SetTyping(t.Context(), key, true); err != nil {
		t.Fatal(err)
	}
	if !e.fake.HasReaction("D1", ts, workingReaction) {
		t.Fatalf("reactions = %+v", e.fake.Reactions())
	}
	if n := e.fake.CallCount("assistant.threads.setStatus"); n != 0 {
		t.Errorf("%d setStatus calls for a thread-less DM", n)
	}
}

// Slack clears a thread's status when the app replies there, so clearing
// it after the reply costs no call; without a reply in between it does.
func TestTypingOffIsFreeAfterAReply(t *testing.T) {
	e := startOnFake(t)
	root := e.fake.Mention("C1", "U1", "go", "")
	e.waitAcked(t, root)
	key := threadKey(root)
	if err := e.b.SetTyping(t.Context(), key, true); err != nil {
		t.Fatal(err)
	}
	if _, err := e.b.Post(t.Context(), key, bridges.Message{Text: "the answer"}); err != nil {
		t.Fatal(err)
	}
	if err := e.b.SetTyping(t.Context(), key, false); err != nil {
		t.Fatal(err)
	}
	if n := e.fake.CallCount("assistant.threads.setStatus"); n != 1 {
		t.Errorf("%d setStatus calls, want 1: the reply cleared the status", n)
	}
	// Off without a reply since on: the status is cleared by a call.
	if err := e.b.SetTyping(t.Context(), key, true); err != nil {
		t.Fatal(err)
	}
	if err := e.b.SetTyping(t.Context(), key, false); err != nil {
		t.Fatal(err)
	}
	if st := e.fake.Statuses(); len(st) != 3 || st[2].Status != "" {
		t.Errorf("statuses = %+v, want on, on, off", st)
	}
}
