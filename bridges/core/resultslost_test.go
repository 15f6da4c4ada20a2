package core_test

import (
	"context"
	"testing"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
)

// TestResultsLostIsTold: when the session reports a gap in the results'
// numbering (a result the CLI sent never arrived), the conversation is
// told that a reply went missing instead of the reply vanishing silently.
func TestResultsLostIsTold(t *testing.T) {
	h := start(t, setup{live: true})
	k := key("T1")
	h.send(k, "m1", "alice", "hello")
	h.waitText(k, "pong: hello")
	h.session(1).Emit(streamjson.ResultsLost{First: 1, Count: 1})
	h.waitText(k, "never reached the bridge")
}

// TestReplyQuotesTheMessageTheResultNames: the reply quotes the message
// the result names (user_message_uuid), not merely the last one whose
// turn started.
func TestReplyQuotesTheMessageTheResultNames(t *testing.T) {
	h := start(t, setup{live: true, script: func(*bridgetest.FakeSession, streamjson.UserMessage) {}})
	k := key("T1")
	h.send(k, "m1", "alice", "first")
	s := h.session(1)
	h.send(k, "m2", "alice", "second")
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	sent, err := s.WaitSent(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	u1, u2 := sent[0].UUID, sent[1].UUID
	s.Emit(streamjson.Lifecycle{UUID: u1, State: streamjson.LifecycleStarted})
	s.Emit(streamjson.Init{})
	s.Emit(streamjson.Lifecycle{UUID: u2, State: streamjson.LifecycleStarted})
	s.Emit(streamjson.AssistantText{Text: "the answer to the first"})
	s.Emit(streamjson.Result{Subtype: "success", Text: "the answer to the first", UserMessageUUID: u1, UserMessageUUIDs: []string{u1}})
	if m := h.waitText(k, "the answer to the first"); m.ReplyTo != "m1" {
		t.Errorf("the reply quotes %q, want m1 (the message the result names)", m.ReplyTo)
	}
}
