package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/store"
)

// storedSessionHas reports whether the session files stored for session
// (session_states, a gzip'd tar of the transcripts) contain word.
func (e *replicaEnv) storedSessionHas(t *testing.T, session, word string) bool {
	t.Helper()
	st, err := store.OpenPostgres(context.Background(), e.dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := st.GetSessionState(context.Background(), session)
	if err != nil {
		return false
	}
	zr, err := gzip.NewReader(bytes.NewReader(s.Data))
	if err != nil {
		t.Fatalf("stored session files: %v", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("stored session files: %v", err)
	}
	return bytes.Contains(b, []byte(word))
}

// TestSlackReplicasRejoinKeepsHistory: a replica that ran a conversation
// stops and comes back with its data_dir while another replica runs the
// conversation (the rejoining one resumes it ahead of its return from
// what it knows then); the conversation has more turns on the other
// replica, whose holder is then killed. The rejoined replica takes the
// conversation over, and its agent's next model request carries every
// earlier turn — not only those its data_dir or its early resume knew.
func TestSlackReplicasRejoinKeepsHistory(t *testing.T) {
	t.Parallel()
	e := startReplicas(t, 2, 3*time.Second)
	ts := e.slack.Mention(slackChan, alice, "alpha one", "")
	e.waitAnswer(t, ts, "pong: alpha one")
	conv := e.convOf(t, ts)
	session := e.sessionOf(t, conv)
	h := e.holderOf(t, conv)
	o := 1 - h

	// The holder stops gracefully: its next turn runs on the other one.
	if err := e.procs[h].stop(time.Minute); err != nil {
		t.Fatalf("stop replica %d: %v", h, err)
	}
	e.slack.SendMessage(slackChan, alice, "bravo two", ts)
	e.waitAnswer(t, ts, "pong: bravo two")

	// It comes back with its data_dir and resumes the conversation early.
	e.procs[h] = startBridge(t, e.procs[h].dir, e.ab.cfg, e.ab.env...)
	if !e.procs[h].waitLog(ctxTimeout(t, e2eWait), "conversation resumed ahead of its return") {
		t.Fatalf("the rejoining replica did not resume the conversation ahead; logs:\n%s", e.procs[h].logs)
	}
	if got := e.holderOf(t, conv); got != o {
		t.Fatalf("the conversation moved to replica %d on the rejoin, want it on %d", got, o)
	}

	// More turns elsewhere, stored; then the holder dies.
	e.slack.SendMessage(slackChan, alice, "charlie three", ts)
	e.waitAnswer(t, ts, "pong: charlie three")
	if err := e.slack.WaitFor(func() bool { return e.storedSessionHas(t, session, "charlie three") }, e2eWait); err != nil {
		t.Fatalf("the third turn's session files were never stored: %v", err)
	}
	e.procs[o].kill9()

	e.slack.SendMessage(slackChan, alice, "[echo-history] delta four", ts)
	e.waitAnswer(t, ts, "history: ") // finished (its footer): a streamed answer is read whole
	var answer string
	for _, p := range e.slack.Posts() {
		if cur, ok := e.slack.Current(p.Channel, p.TS); ok && p.ThreadTS == ts && strings.Contains(e.text(cur), "history: ") && strings.Contains(e.text(cur), " · $") {
			answer = e.text(cur)
		}
	}
	for _, turn := range []string{"alpha one", "bravo two", "charlie three"} {
		if !strings.Contains(answer, turn) {
			t.Errorf("the model request after the rejoin lacks the turn %q: %q", turn, answer)
		}
	}
}

// TestSlackReplicasFirstTurnHolderKilled: the replica running a
// conversation's first turn is killed in it. The survivor takes the
// conversation over with one CLI (its session never stored anywhere, it
// starts anew instead of failing to resume first), tells the thread that
// the agent was restarted on another replica — not that the session
// "could not be resumed" — and answers the message.
func TestSlackReplicasFirstTurnHolderKilled(t *testing.T) {
	t.Parallel()
	e := startReplicas(t, 2, 3*time.Second)
	ts := e.slack.Mention(slackChan, alice, "[slow 40] [slowms 100] first words", "")
	if _, err := e.model.WaitForRequest(ctxTimeout(t, e2eWait), func(r fakemodel.Request) bool {
		return strings.Contains(fakemodel.LastUserText(r), "first words")
	}); err != nil {
		t.Fatal(err)
	}
	conv := e.convOf(t, ts)
	h := e.holderOf(t, conv)
	killed := time.Now()
	e.procs[h].kill9()
	survivor := e.procs[1-h]

	e.waitAnswer(t, ts, "first words") // delivered again: "pong: [agentbridge: … interrupted …] … first words"
	t.Logf("answered %s after the kill", time.Since(killed).Round(10*time.Millisecond))
	e.waitThreadText(t, ts, "restarted on another replica")
	for _, p := range e.slack.Posts() {
		if cur, ok := e.slack.Current(p.Channel, p.TS); ok && p.ThreadTS == ts &&
			(strings.Contains(e.text(cur), "could not be resumed") || strings.Contains(e.text(cur), "does not remember")) {
			t.Errorf("misleading notice: %q", e.text(cur))
		}
	}
	logs := survivor.logs.String()
	if strings.Contains(logs, "resume failed") {
		t.Error("the survivor tried to resume a session nobody stored")
	}
	spawns := 0
	for line := range strings.SplitSeq(logs, "\n") {
		if strings.Contains(line, `msg="acquiring agent"`) && strings.Contains(line, "conversation="+conv) {
			spawns++
		}
	}
	if spawns != 1 {
		t.Errorf("the survivor started %d agents for the conversation, want 1", spawns)
	}
}

// TestSlackReplicasHolderKilledInsidePost: the holder is killed inside
// the chat.postMessage of an answer — Slack took the message, its answer
// never reached the bridge, so nothing recorded an attempt. The next
// holder looks before it posts (the reply's key, in the message's
// metadata) and finds it: the answer shows once.
func TestSlackReplicasHolderKilledInsidePost(t *testing.T) {
	t.Parallel()
	// Quiet: no live message, every answer is one chat.postMessage from
	// the outbox.
	e := startReplicasBot(t, 2, 3*time.Second, "    verbosity: quiet\n")
	ts := e.slack.Mention(slackChan, alice, "hello once", "")
	e.waitThreadText(t, ts, "pong: hello once") // quiet: no cost footer
	conv := e.convOf(t, ts)
	h := e.holderOf(t, conv)

	reached, release := e.slack.HoldResponse("chat.postMessage", func(p url.Values) bool {
		return strings.Contains(p.Get("text")+p.Get("blocks"), "pong: second")
	})
	defer release()
	e.slack.SendMessage(slackChan, alice, "second", ts)
	select {
	case <-reached:
	case <-time.After(e2eWait):
		t.Fatal("the answer was never posted")
	}
	e.procs[h].kill9()

	// The next holder recovers the conversation (its outbox first), then
	// answers a later message: by then the held answer was dealt with.
	e.slack.SendMessage(slackChan, alice, "third", ts)
	e.waitThreadText(t, ts, "pong: third")
	if n := e.postsWith(ts, "pong: second"); n != 1 {
		t.Errorf("the answer posted inside the killed call shows %d times, want once\nposts: %s", n, e.dump())
	}
}
