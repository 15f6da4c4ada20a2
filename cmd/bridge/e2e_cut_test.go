package main

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
)

// One bridge killed while it streams an answer (inside a
// chat.appendStream): the restarted bridge closes the half-written stream
// ("interrupted — continued below") and answers the interrupted message
// again below it (issue 37, Deliver 3).
func TestSlackE2EKilledMidStreamClosedOnRestart(t *testing.T) {
	t.Parallel()
	e := startSlackWith(t, "status_delay: 1m\n")
	ts := e.slack.Mention(slackChan, alice, "hello", "")
	e.waitThreadText(t, ts, "pong: hello")
	e.waitSettled(t, ts)

	reached, release := e.slack.HoldResponse("chat.appendStream", func(url.Values) bool { return true })
	defer release()
	e.slack.SendMessage(slackChan, alice, "[slow 60] [slowms 100] cut story", ts)
	select {
	case <-reached:
	case <-time.After(e2eWait):
		t.Fatalf("the answer was never streamed\n%s", e.dump())
	}
	e.bridge.kill9()
	var cut string
	for _, p := range e.slack.Posts() {
		if cur, _ := e.slack.Current(p.Channel, p.TS); p.ThreadTS == ts && cur.Stream == slackfake.Streaming {
			cut = p.TS
		}
	}
	if cut == "" {
		t.Fatalf("no open stream when the bridge was killed\n%s", e.dump())
	}

	e.ab.restart(t)
	e.bridge = e.ab.bridge
	err := e.slack.WaitFor(func() bool {
		cur, _ := e.slack.Current(slackChan, cut)
		return cur.Stream == slackfake.StreamStopped
	}, e2eWait)
	if err != nil {
		t.Fatalf("the cut stream stays open after the restart: %v\n%s", err, e.dump())
	}
	if cur, _ := e.slack.Current(slackChan, cut); !strings.Contains(cur.Text, "interrupted — continued below") {
		t.Errorf("the cut stream was closed without a word: %q", cur.Text)
	}
	e.slack.SendMessage(slackChan, alice, "after the restart", ts)
	e.waitThreadText(t, ts, "after the restart")
	for _, p := range e.slack.Posts() {
		if cur, _ := e.slack.Current(p.Channel, p.TS); p.ThreadTS == ts && cur.Stream == slackfake.Streaming {
			t.Errorf("a stream stays open: %q", e.text(cur))
		}
	}
}
