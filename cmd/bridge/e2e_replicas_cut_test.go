package main

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
)

// The holder killed while it streams an answer (inside a chat.appendStream):
// the stream it started is left open and half-written. The replica that
// takes the conversation closes it ("interrupted — continued below")
// before it answers again (issue 37, Deliver 3): no message of the thread
// stays open, and the cut one says so.
func TestSlackReplicasCutStreamClosed(t *testing.T) {
	t.Parallel()
	e, ts := killHolderInside(t, "chat.appendStream", "[slow 60] [slowms 100] cut story")
	var cut string
	for _, p := range e.slack.Posts() {
		if cur, _ := e.slack.Current(p.Channel, p.TS); p.ThreadTS == ts && cur.Stream == slackfake.Streaming {
			cut = p.TS
		}
	}
	if cut == "" {
		t.Fatalf("no open stream when the holder was killed\n%s", e.dump())
	}

	e.slack.SendMessage(slackChan, alice, "after the cut", ts)
	e.waitThreadText(t, ts, "after the cut") // (answered with the redelivered message, or after it)
	err := e.slack.WaitFor(func() bool {
		cur, _ := e.slack.Current(slackChan, cut)
		return cur.Stream == slackfake.StreamStopped
	}, e2eWait)
	if err != nil {
		t.Fatalf("the cut stream stays open: %v\n%s", err, e.dump())
	}
	if cur, _ := e.slack.Current(slackChan, cut); !strings.Contains(cur.Text, "interrupted — continued below") {
		t.Errorf("the cut stream was closed without a word: %q", cur.Text)
	}
}

// The holder killed inside the chat.stopStream that ends a streamed
// answer (Slack took it): the stop carried the reply's key, so the next
// holder finds the answer in the stream's message and does not post it
// again (issue 37, Deliver 2).
func TestSlackReplicasHolderKilledInsideStopStream(t *testing.T) {
	t.Parallel()
	e, ts := killHolderInside(t, "chat.stopStream", "[slow 20] [slowms 100] whole story")

	e.slack.SendMessage(slackChan, alice, "after the stop", ts)
	e.waitThreadText(t, ts, "pong: after the stop")
	n := 0
	for _, p := range e.slack.Posts() {
		cur, _ := e.slack.Current(p.Channel, p.TS)
		if p.ThreadTS == ts && strings.Contains(cur.Text, "whole story") {
			n++
		}
		if p.ThreadTS == ts && cur.Stream == slackfake.Streaming {
			t.Errorf("a stream stays open: %q", cur.Text)
		}
	}
	if n != 1 {
		t.Errorf("the answer stopped inside the killed call shows %d times, want once\nposts: %s", n, e.dump())
	}
}

// killHolderInside starts two replicas, lets the first answer of a new
// thread finish, then sends text and kills the conversation's holder
// (SIGKILL) while Slack holds its answer to method (the holder is inside
// that call). It returns the replicas and the thread.
func killHolderInside(t *testing.T, method, text string) (*replicaEnv, string) {
	t.Helper()
	e := startReplicasBot(t, 2, 3*time.Second, "")
	ts := e.slack.Mention(slackChan, alice, "hello once", "")
	e.waitThreadText(t, ts, "pong: hello once")
	e.waitSettled(t, ts)
	h := e.holderOf(t, e.convOf(t, ts))
	reached, release := e.slack.HoldResponse(method, func(url.Values) bool { return true })
	t.Cleanup(release)
	e.slack.SendMessage(slackChan, alice, text, ts)
	select {
	case <-reached:
	case <-time.After(e2eWait):
		t.Fatalf("the holder never reached %s\n%s", method, e.dump())
	}
	e.procs[h].kill9()
	return e, ts
}
