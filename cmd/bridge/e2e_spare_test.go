package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
)

// handedOver matches the pool's log line for a spare given to a conversation.
var handedOver = regexp.MustCompile(`msg="agent: warm spare handed over" .*session=([0-9a-f-]{36})`)

// TestWarmSpareE2E runs the bridge binary with max_live 2 and one warm spare
// (the default): a new thread's first turn runs on the spare, under the
// spare's session id, after the spare's warm-up turn (which never reached
// the model), and is a normal session — !status shows that id, !cost
// counts the turn, the transcript in the spare's state directory holds the
// conversation, and after eviction the thread resumes with its history and
// nothing of the warm-up turn.
func TestWarmSpareE2E(t *testing.T) {
	t.Parallel()
	e := startSlackBridgeWith(t, profileOptions{maxLive: 2})
	ctx := ctxTimeout(t, e2eWait)
	if !e.bridge.waitLog(ctx, `msg="agent: warm spare ready"`) {
		t.Fatalf("no warm spare became ready\nlogs:\n%s", e.bridge.logs)
	}

	a := e.slack.Mention(slackChan, alice, "remember the word kiwi", "")
	e.waitAnswer(t, a, "pong: remember the word kiwi") // finished: its usage is recorded (!cost below)
	m := handedOver.FindStringSubmatch(e.bridge.logs.String())
	if m == nil {
		t.Fatalf("the first thread did not get the warm spare\nlogs:\n%s", e.bridge.logs)
	}
	spareID := m[1]
	// The spare ran its warm-up turn against the bridge's local model: the
	// fake model saw only the conversation's message.
	if !strings.Contains(e.bridge.logs.String(), `msg="agent: warm spare ran its warm-up turn" profile=coder session=`+spareID) {
		t.Errorf("the spare %s ran no warm-up turn\nlogs:\n%s", spareID, e.bridge.logs)
	}
	for _, r := range e.model.MessagesRequests() {
		if id := r.Header.Get("X-Claude-Code-Session-Id"); id != spareID {
			t.Errorf("the first turn ran in session %q, want the spare's %s", id, spareID)
		}
		if strings.Contains(fakemodel.LastUserText(r), "Reply with OK.") {
			t.Errorf("the warm-up turn reached the model")
		}
	}
	e.slack.SendMessage(slackChan, alice, "!status", a)
	e.waitThreadText(t, a, "Session `"+spareID+"`")
	e.waitThreadText(t, a, "warm spares:")
	e.slack.SendMessage(slackChan, alice, "!cost", a)
	e.waitThreadText(t, a, "over 1 turns")

	transcripts, _ := filepath.Glob(filepath.Join(e.ab.dir, "data", "sessions", spareID, "claude", "projects", "*", spareID+".jsonl"))
	if len(transcripts) != 1 {
		t.Fatalf("no transcript of %s in its state directory", spareID)
	}
	if b, err := os.ReadFile(transcripts[0]); err != nil || !strings.Contains(string(b), "remember the word kiwi") {
		t.Errorf("the transcript does not hold the conversation (err %v)", err)
	}

	// Two more threads fill both slots: the spare that replaced the first
	// one gives way, then the idle first thread is evicted.
	b := e.slack.Mention(slackChan, alice, "second thread", "")
	e.waitThreadText(t, b, "pong: second thread")
	c := e.slack.Mention(slackChan, alice, "third thread", "")
	e.waitThreadText(t, c, "pong: third thread")
	if !e.bridge.waitLog(ctx, "evicting the least recently used idle session") {
		t.Fatalf("nothing was evicted\nlogs:\n%s", e.bridge.logs)
	}
	e.slack.SendMessage(slackChan, alice, "[echo-history] what was the word?", a)
	e.waitAnswer(t, a, "history: remember the word kiwi")
	reqs := e.model.MessagesRequests()
	if id := reqs[len(reqs)-1].Header.Get("X-Claude-Code-Session-Id"); id != spareID {
		t.Errorf("the resumed turn ran in session %q, want %s", id, spareID)
	}
	e.slack.SendMessage(slackChan, alice, "!cost", a)
	e.waitThreadText(t, a, "over 2 turns")
}
