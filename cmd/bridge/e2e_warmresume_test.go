package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
)

// TestSlackE2EWarmResumeAfterRestart: through the binary, a conversation
// active shortly before the bridge restarted is resumed ahead of its
// return (its CLI started with --resume, initialized and warmed up against
// the pool's local stand-in model), and its next message is answered by
// that process, with the conversation's history and without the warm-up
// turn reaching the model or the history.
func TestSlackE2EWarmResumeAfterRestart(t *testing.T) {
	t.Parallel()
	e := startSlackWith(t, "")
	ts := e.slack.Mention(slackChan, alice, "remember kiwi", "")
	e.waitThreadText(t, ts, "pong: remember kiwi")
	e.waitLedgerSettled(t)
	// The CLI reports the message completed just after its result: let
	// that reach the ledger, or the restart re-delivers the message.
	time.Sleep(time.Second)
	if err := e.bridge.stop(time.Minute); err != nil {
		t.Fatalf("stop the bridge: %v", err)
	}
	e.ab.restart(t)
	e.bridge = e.ab.bridge
	ctx, cancel := context.WithTimeout(context.Background(), e2eWait)
	defer cancel()
	if !e.bridge.waitLog(ctx, "conversation resumed ahead of its return") {
		t.Fatalf("the conversation was not resumed ahead of its return; logs:\n%s", e.bridge.logs)
	}
	before := len(e.model.MessagesRequests())
	e.slack.SendMessage(slackChan, alice, "[echo-history] again", ts)
	e.waitThreadText(t, ts, "history: remember kiwi")
	if !strings.Contains(e.bridge.logs.String(), "resumed conversation taken warm") {
		t.Errorf("the message was not answered by the warm-resumed process; logs:\n%s", e.bridge.logs)
	}
	for _, r := range e.model.MessagesRequests() {
		if strings.Contains(fakemodel.LastUserText(r), "Reply with OK") {
			t.Errorf("a warm-up turn reached the model: %q", fakemodel.LastUserText(r))
		}
	}
	if n := len(e.model.MessagesRequests()) - before; n != 1 {
		t.Errorf("%d model requests for the message after the restart, want 1", n)
	}
}
