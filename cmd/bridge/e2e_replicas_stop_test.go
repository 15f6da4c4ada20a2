package main

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/bridges/app"
)

// answeredAt returns when the bot's post or edit in thread first showed
// every one of subs (zero: never).
func (e *replicaEnv) answeredAt(thread string, subs ...string) time.Time {
	var first time.Time
	for _, m := range append(e.slack.Posts(), e.slack.Updates()...) {
		if m.ThreadTS != thread {
			continue
		}
		all := true
		for _, s := range subs {
			all = all && strings.Contains(e.text(m), s)
		}
		if all && (first.IsZero() || m.At.Before(first)) {
			first = m.At
		}
	}
	return first
}

// TestSlackReplicasStopFinishesTurn: two replicas; the one holding a
// conversation gets SIGTERM in the middle of a turn (about 3 s long). It
// finishes the turn and posts its answer before it exits — the message
// reaches the model once, never "interrupted" and delivered again — and
// the message sent meanwhile is answered once, with the history: by the
// other replica once the conversation was handed over, or by the running
// agent within the drain when it reached the stopping replica first.
func TestSlackReplicasStopFinishesTurn(t *testing.T) {
	t.Parallel()
	e := startReplicas(t, 2, 30*time.Second)
	ts := e.slack.Mention(slackChan, alice, "hello stop", "")
	e.waitAnswer(t, ts, "pong: hello stop")
	conv := e.convOf(t, ts)
	victim := e.procs[e.holderOf(t, conv)]
	other := e.procs[0]
	if other == victim {
		other = e.procs[1]
	}
	otherID, _ := e.held(t, other)

	e.slack.SendMessage(slackChan, alice, "[slow 30] [slowms 100] long turn", ts)
	if _, err := e.model.WaitForRequest(ctxTimeout(t, e2eWait), func(r fakemodel.Request) bool {
		return strings.Contains(fakemodel.LastUserText(r), "long turn")
	}); err != nil {
		t.Fatal(err)
	}
	if err := victim.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	e.slack.SendMessage(slackChan, alice, "[echo-history] after the stop", ts)

	var exited time.Time
	select {
	case <-victim.done:
		exited = time.Now()
		if victim.exitErr != nil {
			t.Errorf("the stopped replica exited with %v", victim.exitErr)
		}
	case <-time.After(app.ShutdownGrace + 30*time.Second):
		t.Fatal("the stopped replica did not exit within the shutdown grace")
	}
	t.Logf("the stopped replica exited %s after SIGTERM", exited.Sub(stopped).Round(10*time.Millisecond))
	e.waitAnswer(t, ts, "pong: [slow 30] [slowms 100] long turn")
	if at := e.answeredAt(ts, "pong: [slow 30] [slowms 100] long turn", " · $"); at.IsZero() || at.After(exited) {
		t.Errorf("the running turn's answer was posted at %v, after the stopped replica exited (%v)", at, exited)
	}
	e.waitAnswer(t, ts, "history: hello stop")
	// The message sent meanwhile is answered by the other replica once the
	// conversation was handed over — or, when its envelope reached the
	// stopping replica while its agent still ran (on a loaded machine), by
	// that agent within the drain. Either way once and with the history
	// (counted below); the other replica holds nothing else.
	if _, held := e.held(t, other); len(held) > 1 || len(held) == 1 && held[0] != conv {
		t.Errorf("replica %s holds %v after the stop, want [%s] or nothing", otherID, held, conv)
	}

	time.Sleep(2 * time.Second) // a redelivery or a second post would come at once
	long, interrupted := 0, 0
	for _, r := range e.model.Requests() {
		text := fakemodel.LastUserText(r)
		if r.IsMessages() && strings.Contains(text, "long turn") {
			long++
		}
		if strings.Contains(text, "previous turn was interrupted") {
			interrupted++
		}
	}
	if long != 1 || interrupted != 0 {
		t.Errorf("the model got the running turn's message %d times (%d told it was interrupted), want once, never interrupted", long, interrupted)
	}
	for _, s := range []string{"pong: [slow 30] [slowms 100] long turn", "history: hello stop"} {
		if n := e.postsWith(ts, s); n != 1 {
			t.Errorf("%d posts with %q, want 1\nposts: %s", n, s, e.dump())
		}
	}
}
