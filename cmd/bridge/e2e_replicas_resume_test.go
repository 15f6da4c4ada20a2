package main

import (
	"context"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store"
)

// sessionOf returns conversation conv's session id from the shared store.
func (e *replicaEnv) sessionOf(t *testing.T, conv string) string {
	t.Helper()
	st, err := store.OpenPostgres(context.Background(), e.dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.ConversationByID(context.Background(), conv)
	if err != nil {
		t.Fatal(err)
	}
	return c.SessionID
}

// threadOnOtherReplica starts a new thread ("!status") on a replica other
// than holder, steering the fake's envelopes to one connection after the
// other, and returns it with its replica. The replica that receives a new
// thread's first message usually takes it, but another replica polling
// for unheld work may claim it first (on a busy machine it often does), so
// it tries a few rounds.
func (e *replicaEnv) threadOnOtherReplica(t *testing.T, holder int) (string, int) {
	t.Helper()
	defer e.slack.Steer(0)
	const rounds = 5
	for range rounds {
		for conn := 1; conn <= e.slack.Connections(); conn++ {
			e.slack.Steer(conn)
			ts := e.slack.Mention(slackChan, alice, "!status", "")
			e.waitThreadText(t, ts, "Session")
			if h := e.holderOf(t, e.convOf(t, ts)); h != holder {
				return ts, h
			}
		}
	}
	t.Fatalf("a new thread on every connection went to replica %d, %d rounds", holder, rounds)
	return "", 0
}

// TestSlackReplicasResume: two replicas. A session's thread is run by one
// replica, and `!resume` of it is sent in a new thread the other replica
// runs: the request goes to the session's replica, which gives the
// session up; the new thread says it resumed the session, the old one
// says it moved, and the agent in the new thread — on the other replica,
// without a shared filesystem — remembers the old thread's history.
func TestSlackReplicasResume(t *testing.T) {
	t.Parallel()
	e := startReplicas(t, 2, 30*time.Second)
	old := e.slack.Mention(slackChan, alice, "hello resume", "")
	e.waitAnswer(t, old, "pong: hello resume")
	oldConv := e.convOf(t, old)
	oldHolder := e.holderOf(t, oldConv)
	session := e.sessionOf(t, oldConv)

	thread, holder := e.threadOnOtherReplica(t, oldHolder)
	t.Logf("the session's thread runs on replica %d, the new thread on replica %d", oldHolder, holder)
	e.slack.SendMessage(slackChan, alice, "!resume "+session[:8], thread)
	e.waitThreadText(t, thread, "Resumed session")
	e.waitThreadText(t, old, "continued this thread's session")
	if got := e.sessionOf(t, e.convOf(t, thread)); got != session {
		t.Fatalf("the new thread's session is %s, want %s", got, session)
	}

	e.slack.SendMessage(slackChan, alice, "[echo-history] and now", thread)
	e.waitThreadText(t, thread, "history: hello resume")
	if h := e.holderOf(t, e.convOf(t, thread)); h != holder {
		t.Errorf("the new thread moved to replica %d, want it to stay on %d", h, holder)
	}
}
