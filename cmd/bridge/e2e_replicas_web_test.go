package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	srv := needPostgres(t)
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

// on is w's session on another replica (base http://host:port): the same
// cookies, sent there as a load balancer would.
func (w *webClient) on(base string) *webClient {
	w.t.Helper()
	o := &webClient{t: w.t, base: base, c: &http.Client{Jar: w.c.Jar, Timeout: w.c.Timeout}}
	if path, _ := o.get("/"); path != "/" {
		w.t.Fatalf("the session of %s is not valid on %s: GET / ended at %s", w.base, base, path)
	}
	return o
}

// heldConversations asks a replica's /healthz how many conversations it
// holds.
func heldConversations(t *testing.T, p *bridgeProc) int {
	t.Helper()
	_, convs := replicaHeld(t, p)
	return len(convs)
}

// waitTyping waits for a typing event on s saying on.
func waitTyping(t *testing.T, s *webStream, on bool, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case got := <-s.typing:
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
	onA := webSignIn(t, "http://"+procs[0].addr+"/signin#token="+anaWebToken)
	onB := onA.on("http://" + procs[1].addr) // one sign-in serves both replicas

	onB.newChat()
	streamB := onB.events()
	onB.send("hello from B")
	streamB.wait(t, "pong: hello from B", false, e2eWait)
	if a, b := heldConversations(t, procs[0]), heldConversations(t, procs[1]); a != 0 || b != 1 {
		t.Fatalf("replicas A and B hold %d and %d conversations, want 0 and 1", a, b)
	}

	onA.thread = onB.thread
	streamA := onA.events() // since=0: the history so far comes from the store
	streamA.wait(t, "pong: hello from B", false, e2eWait)
	waitTyping(t, streamA, false, e2eWait) // the state at connect: no turn runs

	// An answer B produces for a message sent on B.
	onB.send("[slow 4] second")
	waitTyping(t, streamA, true, e2eWait)
	if ev := streamA.wait(t, "pong: [slow 4] second", false, e2eWait); !strings.Contains(pageText(ev.HTML), "$0.") {
		streamA.wait(t, "$0.", false, e2eWait) // the finished answer's cost footer
	}
	waitTyping(t, streamA, false, e2eWait)

	// A card for a message sent on A, decided by a click on A.
	onA.send("[bash touch web-fanout.txt]")
	ev := streamA.wait(t, "touch web-fanout.txt", true, e2eWait)
	card, choice := cardChoice(t, ev, "Allow")
	onA.click(card, choice)
	streamA.wait(t, "Allowed by @ana", false, e2eWait)
	streamA.wait(t, "tool said", false, e2eWait)
	if _, err := os.Stat(filepath.Join(ab.workdir, "web-fanout.txt")); err != nil {
		t.Errorf("the approved tool did not run: %v", err)
	}
	if a, b := heldConversations(t, procs[0]), heldConversations(t, procs[1]); a != 0 || b != 1 {
		t.Errorf("after A's message and click, replicas A and B hold %d and %d conversations, want 0 and 1", a, b)
	}
}
