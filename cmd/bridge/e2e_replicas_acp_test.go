package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestSlackReplicasACPSessionMoves: two replicas without a shared
// filesystem run a profile of kind acp (the scripted fake ACP agent, its
// sessions kept in its private HOME). A conversation runs two turns on
// one replica, which is then SIGKILLed; the other takes the conversation
// once the lease expires and answers the next message in the SAME agent
// session — session/load with the home restored from the store replays
// both earlier prompts. The killed replica then rejoins with its older
// copy of the home and the other stops gracefully: the rejoined one
// answers from the stored home, with every turn. The thread is never told
// it starts fresh.
func TestSlackReplicasACPSessionMoves(t *testing.T) {
	t.Parallel()
	bin := testkit.BuildFakeACP(t)
	srv := sharedPG.Need(t)
	db := srv.NewDatabaseName(t, "")
	const lease = 3 * time.Second
	top := fmt.Sprintf("store: { driver: postgres, dsn: %q }\nreplicas: { enabled: true, lease: %s }\n", srv.URL(db), lease)
	se := startACPSlackBridgeTop(t, filepath.Join(t.TempDir(), "work"), bin, nil, "", top)
	e := &replicaEnv{slackEnv: se, procs: []*bridgeProc{se.bridge}, dsn: srv.DSN(db), lease: lease}
	e.procs = append(e.procs, startBridge(t, t.TempDir(), se.ab.cfg, se.ab.env...)) // data_dir of its own
	if err := e.slack.WaitForConnections(2, e2eWait); err != nil {
		t.Fatal(err)
	}

	ts := e.slack.Mention(slackChan, alice, "hello", "")
	e.waitThreadText(t, ts, "Hello from fake ACP")
	e.waitSettled(t, ts)
	e.slack.SendMessage(slackChan, alice, "second", ts)
	e.waitThreadText(t, ts, "turn 2; history: hello | second")
	e.waitSettled(t, ts)

	conv := e.convOf(t, ts)
	holder := e.holderOf(t, conv)
	other := e.procs[1-holder]
	t.Logf("replica %d runs the conversation: killed", holder)
	e.procs[holder].kill9()

	e.slack.SendMessage(slackChan, alice, "after the move", ts)
	e.waitThreadText(t, ts, "turn 3; history: hello | second | after the move")
	if _, held := e.held(t, other); !slices.Contains(held, conv) {
		t.Errorf("the surviving replica does not hold the conversation (holds %v)", held)
	}
	e.waitSettled(t, ts)

	// The killed replica rejoins with its data_dir (its copy of the home
	// stops at the second turn) and resumes the conversation ahead from
	// the store; the other stops gracefully and hands the conversation
	// back: the fourth turn has all three before it.
	e.procs[holder] = startBridge(t, e.procs[holder].dir, e.ab.cfg, e.ab.env...)
	if !e.procs[holder].waitLog(ctxTimeout(t, e2eWait), "conversation resumed ahead of its return") {
		t.Fatalf("the rejoining replica did not resume the conversation ahead; logs:\n%s", e.procs[holder].logs)
	}
	if err := other.stop(time.Minute); err != nil {
		t.Fatalf("stop the other replica: %v", err)
	}
	e.slack.SendMessage(slackChan, alice, "fourth", ts)
	e.waitThreadText(t, ts, "turn 4; history: hello | second | after the move | fourth")
	e.waitSettled(t, ts)
	for _, s := range []string{"starts anew", "fresh session", "could not resume"} {
		if strings.Contains(e.threadText(ts), s) {
			t.Errorf("the thread says %q: the session was not carried\n%s", s, e.dump())
		}
	}
}
