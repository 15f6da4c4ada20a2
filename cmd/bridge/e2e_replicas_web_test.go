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
// one PostgreSQL database, each with a data_dir of its own holding the
// same cookie signing key (as scaling.md tells operators), and returns
// their processes.
func startWebReplicas(t *testing.T) (agentBridge, [2]*bridgeProc) {
	t.Helper()
	srv := needPostgres(t)
	db := srv.NewDatabaseName(t, "")
	po := profileOptions{maxLive: 4, extra: "    warm_spares: 0\n",
		top: fmt.Sprintf("store: { driver: postgres, dsn: %q }\nreplicas: { enabled: true, lease: 30s }\n", srv.URL(db))}
	ab := startAgentBridgeWith(t, po, webBots, "WEB_TOKEN_ANA="+anaWebToken, "WEB_TOKEN_BOB="+bobWebToken)
	dirB := t.TempDir() // a data_dir of its own, with A's signing key
	key, err := os.ReadFile(filepath.Join(ab.dir, "data", "web-session.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dirB, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirB, "data", "web-session.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	b := startBridge(t, dirB, ab.cfg, ab.env...)
	return ab, [2]*bridgeProc{ab.bridge, b}
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
