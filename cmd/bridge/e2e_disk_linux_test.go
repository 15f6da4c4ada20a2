//go:build linux

package main

import (
	"database/sql"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/internal/tmpfstest"
)

// TestSlackE2EDiskFull: the real bridge binary with the fake Slack and the
// real CLI, its data_dir on a 16 MiB tmpfs that the test fills up and then
// frees. What must not be lost: every message sent while the disk is full.
// None is acknowledged (so Slack keeps it and sends it again), /healthz
// and /metrics say the storage is full, the condition is logged once (not
// per message), the bridge never exits, and once space returns the
// redelivered messages are accepted without a restart and each is
// answered exactly once. About 15 s with the real CLI.
func TestSlackE2EDiskFull(t *testing.T) {
	t.Parallel()
	dataDir := tmpfstest.Mount(t, 16<<20)
	e := startSlackBridgeWith(t, profileOptions{dataDir: dataDir})

	// A conversation from before the disk filled up: its agent is live.
	first := e.slack.Mention(slackChan, alice, "before the disk filled", "")
	e.waitThreadText(t, first, "pong: before the disk filled")

	filler := tmpfstest.Fill(t, dataDir)
	// A follow-up in the live thread and a new conversation.
	during := []slackfake.Sent{
		e.slack.Send(slackfake.Msg{Channel: slackChan, User: alice, Text: "during one", ThreadTS: first}),
		e.slack.Send(slackfake.Msg{Channel: slackChan, User: alice, Text: "<@" + slackfake.BotUserID + "> during two"}),
	}
	waitStorage(t, e.bridge, "full")
	// Slack sends unacknowledged events again; while the disk is full they
	// are refused again.
	resent := resendAll(e.slack, during)
	waitTaken(t, e.slack, resent)
	waitTaken(t, e.slack, envelopeIDs(during))
	time.Sleep(500 * time.Millisecond) // an ack, were one sent, arrives within this
	for _, id := range append(envelopeIDs(during), resent...) {
		if env, _ := e.slack.Envelope(id); env.Acked {
			t.Errorf("envelope %s was acknowledged while the disk was full: Slack would not send it again", id)
		}
	}
	code, body := e.bridge.healthz(t)
	if code != http.StatusOK || body.Status != "degraded" || body.Storage == nil || body.Storage.State != "full" ||
		body.Storage.Since.IsZero() || !strings.Contains(body.Storage.Error, "full") {
		t.Errorf("/healthz while full = %d %+v (storage %+v); want 200, degraded, storage full with since and error", code, body, body.Storage)
	}
	if m := e.bridge.metrics(t); !strings.Contains(m, "agentbridge_storage_full 1") {
		t.Errorf("/metrics lacks agentbridge_storage_full 1 while full")
	}
	if n := strings.Count(e.bridge.logs.String(), `msg="database cannot be written`); n != 1 {
		t.Errorf("the full disk was logged %d times, want once (once per minute, not per message)", n)
	}

	filler.Free(t)
	// Slack's next retry of each message: accepted and acknowledged now.
	retried := resendAll(e.slack, during)
	for _, id := range retried {
		if _, err := e.slack.WaitForAck(id, e2eWait); err != nil {
			t.Fatalf("redelivery after space returned: %v\nlogs:\n%s", err, e.bridge.logs)
		}
	}
	e.waitThreadText(t, first, "pong: during one")
	e.waitThreadText(t, during[1].TS, "pong: during two")
	waitStorage(t, e.bridge, "ok")
	if m := e.bridge.metrics(t); !strings.Contains(m, "agentbridge_storage_full 0") {
		t.Errorf("/metrics lacks agentbridge_storage_full 0 after space returned")
	}

	// One more message in each thread, answered after anything the
	// redeliveries could still cause: then each answer is counted.
	e.slack.SendMessage(slackChan, alice, "after one", first)
	e.slack.SendMessage(slackChan, alice, "after two", during[1].TS)
	e.waitThreadText(t, first, "pong: after one")
	e.waitThreadText(t, during[1].TS, "pong: after two")
	for _, want := range []string{"pong: before the disk filled", "pong: during one", "pong: during two", "pong: after one", "pong: after two"} {
		if n := e.answers(want); n != 1 {
			t.Errorf("%q answered %d times, want once\nposts: %s", want, n, e.dump())
		}
	}
	select {
	case <-e.bridge.done:
		t.Fatalf("the bridge exited: %v", e.bridge.exitErr)
	default:
	}
}

// answers counts the bot's messages (as they read now) that contain want.
func (e *slackEnv) answers(want string) int {
	n := 0
	for _, p := range e.slack.Posts() {
		if cur, ok := e.slack.Current(p.Channel, p.TS); ok && strings.Contains(e.text(cur), want) {
			n++
		}
	}
	return n
}

func envelopeIDs(sent []slackfake.Sent) []string {
	var ids []string
	for _, s := range sent {
		ids = append(ids, s.Envelopes...)
	}
	return ids
}

// resendAll sends every envelope of sent again as Slack's retry.
func resendAll(sl *slackfake.Server, sent []slackfake.Sent) []string {
	var ids []string
	for _, id := range envelopeIDs(sent) {
		ids = append(ids, sl.Resend(id))
	}
	return ids
}

// waitTaken waits until the bridge's socket has read every envelope.
func waitTaken(t *testing.T, sl *slackfake.Server, ids []string) {
	t.Helper()
	err := sl.WaitFor(func() bool {
		for _, id := range ids {
			if env, ok := sl.Envelope(id); !ok || env.Sent.IsZero() {
				return false
			}
		}
		return true
	}, e2eWait)
	if err != nil {
		t.Fatalf("envelopes %v not taken by the bridge: %v", ids, err)
	}
}

// waitStorage waits until /healthz reports the storage state want.
func waitStorage(t *testing.T, p *bridgeProc, want string) {
	t.Helper()
	testkit.WaitUntilSeen(t, fmt.Sprintf("/healthz storage %q", want), e2eWait, func() (bool, string) {
		_, body := p.healthz(t)
		return body.Storage != nil && body.Storage.State == want, fmt.Sprintf("%+v\nlogs:\n%s", body.Storage, p.logs)
	})
}

// TestSlackE2EDiskFullMidTurn: the disk fills up while the agent answers.
// What must not be lost: the answer (its outbox row cannot be written) and
// the ledger's record that the message was answered. The answer is kept
// in memory and posted once, after space returns; a restart afterwards
// answers nothing again (the ledger marks were recorded, in order).
// About 20 s with the real CLI.
func TestSlackE2EDiskFullMidTurn(t *testing.T) {
	t.Parallel()
	const midAnswer = "pong: [slow 30] mid turn......" // the fake model's answer, padded by [slow]
	dataDir := tmpfstest.Mount(t, 16<<20)
	e := startSlackBridgeWith(t, profileOptions{dataDir: dataDir})
	first := e.slack.Mention(slackChan, alice, "warm up", "")
	e.waitThreadText(t, first, "pong: warm up")

	e.slack.SendMessage(slackChan, alice, "[slow 30] mid turn", first) // streams for 3 s
	if _, err := e.model.WaitForRequest(ctxTimeout(t, e2eWait), func(r fakemodel.Request) bool {
		return strings.Contains(fakemodel.LastUserText(r), "mid turn")
	}); err != nil {
		t.Fatalf("the model never got the message: %v", err)
	}
	filler := tmpfstest.Fill(t, dataDir)
	waitStorage(t, e.bridge, "full")
	if err := e.slack.WaitFor(func() bool { return e.answers("disk is full") == 1 }, e2eWait); err != nil {
		t.Errorf("no notice that the answer waits for the disk: %v", err)
	}
	// The live message shows the streamed text; the reply (with its cost
	// footer) waits until it is recorded.
	if n := e.answers(midAnswer + "\n\n_"); n != 0 {
		t.Errorf("the answer was posted %d times before it was recorded\nposts: %s", n, e.dump())
	}
	filler.Free(t)
	e.waitThreadText(t, first, midAnswer+"\n\n_")
	waitStorage(t, e.bridge, "ok")

	e.slack.SendMessage(slackChan, alice, "after", first)
	e.waitThreadText(t, first, "pong: after")
	// The CLI reports a message completed just after its answer: wait for
	// that before stopping, or the restart would rightly deliver it again.
	waitLedgerFinal(t, filepath.Join(dataDir, "bridge.db"))
	if err := e.bridge.stop(60 * time.Second); err != nil {
		t.Fatalf("stop: %v", err)
	}
	e.ab.restart(t)
	e.slack.SendMessage(slackChan, alice, "after restart", first)
	e.waitThreadText(t, first, "pong: after restart")
	for _, want := range []string{"pong: warm up", midAnswer, "pong: after", "pong: after restart"} {
		if n := e.answers(want); n != 1 && !(want == "pong: after" && n == 2) { // "pong: after restart" contains "pong: after"
			t.Errorf("%q answered %d times, want once\nposts: %s", want, n, e.dump())
		}
	}
	if got := modelAsked(e, "mid turn"); got != 1 {
		t.Errorf("the model got %q %d times, want once (redelivered after the restart?)", "mid turn", got)
	}
}

// modelAsked counts the model requests whose newest user text contains s.
func modelAsked(e *slackEnv, s string) int {
	n := 0
	for _, r := range e.model.MessagesRequests() {
		if strings.Contains(fakemodel.LastUserText(r), s) {
			n++
		}
	}
	return n
}

// waitLedgerFinal waits until every inbox message in the database at path
// is in a final state (read-only, next to the running bridge).
func waitLedgerFinal(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	testkit.WaitUntilSeen(t, "no open inbox message", e2eWait, func() (bool, string) {
		var open int
		err := db.QueryRow(`SELECT count(*) FROM inbox WHERE state IN ('pending', 'sent', 'started')`).Scan(&open)
		return err == nil && open == 0, fmt.Sprintf("%d open, %v", open, err)
	})
}
