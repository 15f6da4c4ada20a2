package main

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
	"github.com/agentbridge/agentbridge/bridges/app"
	"github.com/agentbridge/agentbridge/store"
)

// holderOf returns the index of the replica whose /healthz lists conv.
func (e *replicaEnv) holderOf(t *testing.T, conv string) int {
	t.Helper()
	for i, p := range e.procs {
		if _, held := e.held(t, p); slices.Contains(held, conv) {
			return i
		}
	}
	t.Fatalf("no replica holds conversation %s", conv)
	return -1
}

// convOf returns the id of the conversation of thread.
func (e *replicaEnv) convOf(t *testing.T, thread string) string {
	t.Helper()
	for id, ts := range e.threads(t) {
		if ts == thread {
			return id
		}
	}
	t.Fatalf("no conversation for thread %s", thread)
	return ""
}

// approvals lists conversation conv's approvals from the shared store.
func (e *replicaEnv) approvals(t *testing.T, conv string) []store.Approval {
	t.Helper()
	st, err := store.OpenPostgres(context.Background(), e.dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	as, err := st.ApprovalsForConversation(context.Background(), conv)
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// clickTwice clicks "allow" on card as alice twice, one click after the
// other, and returns the connections the two envelopes went to once both
// are acknowledged.
func (e *replicaEnv) clickTwice(t *testing.T, card slackfake.Message) [2]int {
	t.Helper()
	ids := [2]string{
		e.slack.Click(slackChan, card.TS, alice, "allow", ""),
		e.slack.Click(slackChan, card.TS, alice, "allow", ""),
	}
	var conns [2]int
	for i, id := range ids {
		if _, err := e.slack.WaitForAck(id, e2eWait); err != nil {
			t.Fatalf("click %d on card %s: %v", i, card.TS, err)
		}
		env, _ := e.slack.Envelope(id)
		conns[i] = env.Conn
	}
	return conns
}

// TestSlackReplicasCardDecidedOnce: three replicas; the replica holding a
// conversation is SIGKILLed while it posts a permission card, before it
// learns (and stores) where the card shows. After the take-over the old
// card, found by its Idem, shows it expired and stays expired although it is
// clicked twice (at two replicas); the interrupted message asks again, and
// the new card, clicked twice at two replicas, is decided once: the store
// has one decision per card, the agent gets one tool result, the tool runs
// once and its answer is posted once.
func TestSlackReplicasCardDecidedOnce(t *testing.T) {
	t.Parallel()
	const lease = 3 * time.Second
	e := startReplicas(t, 3, lease)
	// The holder is killed inside the card's chat.postMessage: the card
	// shows, but no replica ever learns where (its reference is never
	// stored). The new holder finds it by the Idem in its metadata (the
	// adapter's look-up) and closes it all the same.
	reached, release := e.slack.HoldResponse("chat.postMessage", func(p url.Values) bool {
		return strings.Contains(p.Get("metadata"), `"card:`)
	})
	defer release()
	ts := e.slack.Mention(slackChan, alice, "[bash echo once >> card-once.txt]", "")
	select {
	case <-reached:
	case <-time.After(e2eWait):
		t.Fatalf("the card was never posted\nposts: %s", e.dump())
	}
	card := e.waitCard(t, ts)
	conv := e.convOf(t, ts)
	holder := e.holderOf(t, conv)
	e.procs[holder].kill9()
	killed := time.Now()

	// The new holder expires the old card and asks again with a new one.
	if _, err := e.slack.WaitForUpdate(func(m slackfake.Message) bool {
		return m.TS == card.TS && strings.Contains(e.text(m), "Expired")
	}, lease+e2eWait); err != nil {
		t.Fatalf("the old card was not closed after the take-over: %v\nposts: %s", err, e.dump())
	}
	card2, err := e.slack.WaitForPost(func(m slackfake.Message) bool {
		return m.ThreadTS == ts && len(m.Buttons) > 0 && m.TS != card.TS
	}, e2eWait)
	if err != nil {
		t.Fatalf("the interrupted message did not ask again: %v\nposts: %s", err, e.dump())
	}
	t.Logf("the new holder asked again %s after the kill", time.Since(killed).Round(10*time.Millisecond))

	if c := e.clickTwice(t, card); c[0] == c[1] {
		t.Errorf("both clicks on the old card went to connection %d, want two replicas", c[0])
	}
	if c := e.clickTwice(t, card2); c[0] == c[1] {
		t.Errorf("both clicks on the new card went to connection %d, want two replicas", c[0])
	}
	e.waitAnswer(t, ts, "tool said")
	time.Sleep(2 * time.Second) // a second decision, tool run or answer would come at once

	as := e.approvals(t, conv)
	if len(as) != 2 {
		t.Fatalf("approvals: %d rows, want 2 (the expired card, the new one): %+v", len(as), as)
	}
	slices.SortFunc(as, func(a, b store.Approval) int { return a.RequestedAt.Compare(b.RequestedAt) })
	if as[0].Decision != store.DecisionExpired || as[0].DecidedBy != "" || as[0].CardMsgID != "" {
		t.Errorf("the old card's approval is %q by %q with card %q, want expired by nobody, its card unknown",
			as[0].Decision, as[0].DecidedBy, as[0].CardMsgID)
	}
	if as[1].Decision != store.DecisionAllow || as[1].DecidedBy != alice {
		t.Errorf("the new card's approval is %q by %q, want allow by %s", as[1].Decision, as[1].DecidedBy, alice)
	}
	var results []string
	for _, r := range e.model.Requests() {
		if r.IsMessages() && r.Script == "tool-result" {
			results = append(results, fakemodel.LastUserText(r))
		}
	}
	if len(results) != 1 {
		t.Errorf("the model got %d tool results, want 1: %q", len(results), results)
	}
	if b, err := os.ReadFile(filepath.Join(e.workdir, "card-once.txt")); err != nil || string(b) != "once\n" {
		t.Errorf("card-once.txt = %q, %v; want the tool run once", b, err)
	}
	if n := e.postsWith(ts, "tool said"); n != 1 {
		t.Errorf("%d posts with the tool's answer, want 1\nposts: %s", n, e.dump())
	}
}

// TestSlackReplicasCardDecidedOnceStop: two replicas; a permission card is
// open when the replica holding its conversation gets SIGTERM. The stopping
// replica waits for the open turn (graceful stop), so the card stays open;
// clicked twice, at both replicas, it is decided once by its holder, the
// tool runs once, the answer is posted once and nothing is delivered again;
// then the replica exits.
func TestSlackReplicasCardDecidedOnceStop(t *testing.T) {
	t.Parallel()
	e := startReplicas(t, 2, 30*time.Second)
	ts := e.slack.Mention(slackChan, alice, "[bash echo once >> card-stop.txt]", "")
	card := e.waitCard(t, ts)
	conv := e.convOf(t, ts)
	holder := e.procs[e.holderOf(t, conv)]
	if err := holder.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the stop has begun
	if c := e.clickTwice(t, card); c[0] == c[1] {
		t.Errorf("both clicks went to connection %d, want two replicas", c[0])
	}
	e.waitAnswer(t, ts, "tool said")
	select {
	case <-holder.done:
		if holder.exitErr != nil {
			t.Errorf("the stopped replica exited with %v", holder.exitErr)
		}
	case <-time.After(app.ShutdownGrace + 30*time.Second):
		t.Fatal("the stopped replica did not exit")
	}
	time.Sleep(2 * time.Second) // a redelivery or a second answer would come at once

	as := e.approvals(t, conv)
	if len(as) != 1 || as[0].Decision != store.DecisionAllow || as[0].DecidedBy != alice {
		t.Errorf("approvals = %+v, want one, allowed by %s", as, alice)
	}
	results, interrupted := 0, 0
	for _, r := range e.model.Requests() {
		if r.IsMessages() && r.Script == "tool-result" {
			results++
		}
		if strings.Contains(fakemodel.LastUserText(r), "previous turn was interrupted") {
			interrupted++
		}
	}
	if results != 1 || interrupted != 0 {
		t.Errorf("the model got %d tool results and %d redeliveries, want 1 and 0", results, interrupted)
	}
	if b, err := os.ReadFile(filepath.Join(e.workdir, "card-stop.txt")); err != nil || string(b) != "once\n" {
		t.Errorf("card-stop.txt = %q, %v; want the tool run once", b, err)
	}
	if n := e.postsWith(ts, "tool said"); n != 1 {
		t.Errorf("%d posts with the tool's answer, want 1\nposts: %s", n, e.dump())
	}
}
