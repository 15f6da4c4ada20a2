package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/web/webtest"
)

// startWebReplicas starts two replicas with the web console (webBots) on
// one PostgreSQL database, each with a data_dir of its own and no key file
// copied between them (they share the cookie signing key through the
// database), and returns their processes.
func startWebReplicas(t *testing.T) (agentBridge, [2]*bridgeProc) {
	t.Helper()
	ab, _ := startWebReplica(t, "")
	return ab, [2]*bridgeProc{ab.bridge, ab.replica(t)}
}

// startWebReplica starts the first replica with the web console (webBots)
// on a new PostgreSQL database, and returns it with the database's DSN.
// dataDir is its data_dir ("": ./data next to its bridge.yaml).
func startWebReplica(t *testing.T, dataDir string) (agentBridge, string) {
	t.Helper()
	srv := sharedPG.Need(t)
	db := srv.NewDatabaseName(t, "")
	po := profileOptions{maxLive: 4, dataDir: dataDir, extra: "    warm_spares: 0\n",
		top: fmt.Sprintf("store: { driver: postgres, dsn: %q }\nreplicas: { enabled: true, lease: 30s }\n", srv.URL(db))}
	return startAgentBridgeWith(t, po, webBots, "WEB_TOKEN_ANA="+anaWebToken, "WEB_TOKEN_BOB="+bobWebToken), srv.DSN(db)
}

// replica starts another replica of ab: the same config and environment,
// a data_dir of its own.
func (ab *agentBridge) replica(t *testing.T) *bridgeProc {
	t.Helper()
	return startBridge(t, t.TempDir(), ab.cfg, ab.env...)
}

// heldConversations asks a replica's /healthz how many conversations it
// holds.
func heldConversations(t *testing.T, p *bridgeProc) int {
	t.Helper()
	_, convs := replicaHeld(t, p)
	return len(convs)
}

// waitTyping waits for a typing event on s saying on.
func waitTyping(t *testing.T, s *webtest.Stream, on bool, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case got := <-s.Typing:
			if got == on {
				return
			}
		case <-deadline:
			t.Fatalf("no typing event %v within %v", on, timeout)
		}
	}
}

// TestWebReplicasLiveUpdates: two replicas, one PostgreSQL, the web
// console on both, ana signed in once (the replicas share the signing
// key). Ana's conversation is run by replica B (she started it
// there); her page on replica A follows it live: the turn running, the
// streamed answer with its cost, a permission card and its closing — all
// produced on B — reach A's event stream without a reload, and what she
// sends and clicks on A reaches B, which keeps running the conversation.
func TestWebReplicasLiveUpdates(t *testing.T) {
	t.Parallel()
	ab, procs := startWebReplicas(t)
	onA := webtest.SignIn(t, "http://"+procs[0].addr+"/signin#token="+anaWebToken)
	onB := onA.On("http://" + procs[1].addr) // one sign-in serves both replicas

	onB.NewChat()
	streamB := onB.Events()
	onB.Send("hello from B")
	streamB.Wait(t, "pong: hello from B", false, e2eWait)
	if a, b := heldConversations(t, procs[0]), heldConversations(t, procs[1]); a != 0 || b != 1 {
		t.Fatalf("replicas A and B hold %d and %d conversations, want 0 and 1", a, b)
	}

	onA.Thread = onB.Thread
	streamA := onA.Events() // since=0: the history so far comes from the store
	streamA.Wait(t, "pong: hello from B", false, e2eWait)
	waitTyping(t, streamA, false, e2eWait) // the state at connect: no turn runs

	// An answer B produces for a message sent on B.
	onB.Send("[slow 4] second")
	waitTyping(t, streamA, true, e2eWait)
	if ev := streamA.Wait(t, "pong: [slow 4] second", false, e2eWait); !strings.Contains(webtest.PageText(ev.HTML), "$0.") {
		streamA.Wait(t, "$0.", false, e2eWait) // the finished answer's cost footer
	}
	waitTyping(t, streamA, false, e2eWait)

	// A card for a message sent on A, decided by a click on A.
	onA.Send("[bash touch web-fanout.txt]")
	ev := streamA.Wait(t, "touch web-fanout.txt", true, e2eWait)
	card, choice := webtest.CardChoice(t, ev, "Allow")
	onA.Click(card, choice)
	streamA.Wait(t, "Allowed by @ana", false, e2eWait)
	streamA.Wait(t, "tool said", false, e2eWait)
	if _, err := os.Stat(filepath.Join(ab.workdir, "web-fanout.txt")); err != nil {
		t.Errorf("the approved tool did not run: %v", err)
	}
	if a, b := heldConversations(t, procs[0]), heldConversations(t, procs[1]); a != 0 || b != 1 {
		t.Errorf("after A's message and click, replicas A and B hold %d and %d conversations, want 0 and 1", a, b)
	}
}
