package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// replicaEnv is several bridge binaries (replicas) on one PostgreSQL
// database, each with a data_dir of its own (no shared filesystem), all
// on one fake Slack app and the real CLI against the fake model.
type replicaEnv struct {
	*slackEnv
	procs []*bridgeProc
	dsn   string
	lease time.Duration
}

// startReplicas starts n replicas with config replicas: {enabled: true,
// lease: lease} and waits until each has its Socket Mode connection.
func startReplicas(t *testing.T, n int, lease time.Duration) *replicaEnv {
	t.Helper()
	return startReplicasBot(t, n, lease, "")
}

// startReplicasBot is startReplicas with more keys for the bot (YAML
// lines, each indented by four spaces, e.g. "    verbosity: quiet\n").
func startReplicasBot(t *testing.T, n int, lease time.Duration, botExtra string) *replicaEnv {
	t.Helper()
	srv := sharedPG.Need(t)
	db := srv.NewDatabaseName(t, "")
	po := profileOptions{maxLive: 12, extra: "    warm_spares: 0\n",
		top: fmt.Sprintf("store: { driver: postgres, dsn: %q }\nreplicas: { enabled: true, lease: %s }\n", srv.URL(db), lease)}
	e := startSlackBridgeBot(t, po, botExtra, fmt.Sprintf("users: [%s]", alice))
	env := &replicaEnv{slackEnv: e, procs: []*bridgeProc{e.bridge}, dsn: srv.DSN(db), lease: lease}
	for range n - 1 {
		env.procs = append(env.procs, startBridge(t, t.TempDir(), e.ab.cfg, e.ab.env...)) // data_dir of its own
	}
	if err := e.slack.WaitForConnections(n, e2eWait); err != nil {
		t.Fatal(err)
	}
	return env
}

// held asks a replica's /healthz which conversations it holds.
func (e *replicaEnv) held(t *testing.T, p *bridgeProc) (id string, convs []string) {
	t.Helper()
	return replicaHeld(t, p)
}

// replicaHeld asks a replica's /healthz for its id and the conversations
// it holds.
func replicaHeld(t *testing.T, p *bridgeProc) (id string, convs []string) {
	t.Helper()
	resp, err := http.Get("http://" + p.addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Replica *struct {
			ID            string   `json:"id"`
			Conversations []string `json:"conversations"`
		} `json:"replica"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Replica == nil {
		t.Fatalf("/healthz has no replica section: %v", err)
	}
	return body.Replica.ID, body.Replica.Conversations
}

// threads maps each conversation id to its Slack thread.
func (e *replicaEnv) threads(t *testing.T) map[string]string {
	t.Helper()
	st, err := store.OpenPostgres(context.Background(), e.dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	convs, err := st.ListConversations(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[string]string, len(convs))
	for _, c := range convs {
		m[c.ID] = c.Key.Thread
	}
	return m
}

// waitAnswer waits until a post in thread shows want in a finished
// answer (with its cost footer): a streamed message shows the text before
// the turn ends.
func (e *replicaEnv) waitAnswer(t *testing.T, thread, want string) {
	t.Helper()
	e.waitThreadText(t, thread, want)
	if err := e.slack.WaitFor(func() bool { return e.postsWith(thread, want, " · $") > 0 }, e2eWait); err != nil {
		t.Fatalf("thread %s never finished the answer %q: %v\nposts: %s", thread, want, err, e.dump())
	}
}

// postsWith counts the bot's posts in thread whose current text contains
// every one of subs.
func (e *replicaEnv) postsWith(thread string, subs ...string) int {
	n := 0
	for _, p := range e.slack.Posts() {
		cur, ok := e.slack.Current(p.Channel, p.TS)
		if !ok || p.ThreadTS != thread {
			continue
		}
		all := true
		for _, s := range subs {
			all = all && strings.Contains(e.text(cur), s)
		}
		if all {
			n++
		}
	}
	return n
}

// loadScale is how much slower than an idle machine this one is: its load
// average over its CPUs, at least 1. Waits on agent work (CLI boots,
// streamed turns) grow by that ratio on a shared CI machine.
func loadScale(t *testing.T) float64 {
	b, err := os.ReadFile("/proc/loadavg")
	var load float64
	if err == nil {
		_, err = fmt.Sscan(string(b), &load)
	}
	scale := 1.0
	if err == nil {
		scale = max(1, load/float64(runtime.NumCPU()))
	}
	t.Logf("load average %.1f on %d CPUs: agent waits scaled by %.1f", load, runtime.NumCPU(), scale)
	return scale
}

// agentStartBudget is the time the failover tests allow, after the hand-
// over, for resuming the moved conversations' agents and answering (the
// issue's "lease time + 10 s"), scaled by the machine's load (loadScale);
// the hand-over itself is held to its own deadline.
func agentStartBudget(t *testing.T) time.Duration {
	return time.Duration(float64(10*time.Second) * loadScale(t))
}

// handOverBy is the deadline of a graceful hand-over: within want of the
// stop on an idle machine, longer by the machine's load (the victim
// finishes its running turn first, agent work), but always a second
// before the first of the victim's leases could expire — so whatever
// takes them over by then was handed them, not let in by an expiry.
func (e *replicaEnv) handOverBy(t *testing.T, victim string, stopped time.Time, want time.Duration) time.Time {
	t.Helper()
	st, err := store.OpenPostgres(context.Background(), e.dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ls, err := st.Leases(context.Background(), victim)
	if err != nil {
		t.Fatal(err)
	}
	by := stopped.Add(time.Duration(float64(want) * loadScale(t)))
	for _, l := range ls {
		if exp := l.ExpiresAt.Add(-time.Second); exp.Before(by) {
			by = exp
		}
	}
	if !by.After(stopped.Add(want)) {
		t.Fatalf("the victim's leases expire within %s of the stop: no room to tell a hand-over from an expiry", want)
	}
	return by
}

// failover runs the failover scenario on three replicas: ten conversations
// with history, a turn running on the replica holding the most of them,
// then stop(victim). The surviving replicas must hold every conversation
// of the victim within handover of the stop (graceful: handOverBy), and
// every conversation must answer its next message with its history within that plus
// agentStartBudget; no message is lost and no reply is posted twice. The
// running turn is delivered again by the new holder, or, when graceful,
// finished and answered by the victim before it hands over.
func failover(t *testing.T, lease, handover time.Duration, stop func(*bridgeProc), graceful bool) {
	e := startReplicas(t, 3, lease)
	const convs = 10
	tss := make([]string, convs)
	for i := range convs {
		tss[i] = e.slack.Mention(slackChan, alice, fmt.Sprintf("hello %d", i), "")
	}
	for i, ts := range tss {
		e.waitAnswer(t, ts, fmt.Sprintf("pong: hello %d", i))
	}

	// The victim: the replica holding the most conversations.
	victim, most := 0, -1
	spread := make([]int, len(e.procs))
	var victimConvs []string
	var victimID string
	for i, p := range e.procs {
		id, held := e.held(t, p)
		spread[i] = len(held)
		if len(held) > most {
			victim, most, victimConvs, victimID = i, len(held), held, id
		}
	}
	t.Logf("conversations per replica: %v; stopping replica %d", spread, victim)
	if most == 0 {
		t.Fatal("no replica holds a conversation")
	}
	if m := e.procs[victim].metrics(t); !strings.Contains(m, `replica="`+victimID+`"`) {
		t.Errorf("/metrics of replica %s lacks its replica label", victimID)
	}
	threadOf := e.threads(t)
	busy := threadOf[victimConvs[0]]
	e.slack.SendMessage(slackChan, alice, "[slow 40] [slowms 100] mid-turn", busy)
	if _, err := e.model.WaitForRequest(ctxTimeout(t, e2eWait), func(r fakemodel.Request) bool {
		return strings.Contains(fakemodel.LastUserText(r), "mid-turn")
	}); err != nil {
		t.Fatal(err)
	}
	budget := agentStartBudget(t)
	stopped := time.Now()
	handOverDeadline := stopped.Add(handover)
	if graceful {
		handOverDeadline = e.handOverBy(t, victimID, stopped, handover)
	}
	stop(e.procs[victim])

	for i, ts := range tss {
		e.slack.SendMessage(slackChan, alice, fmt.Sprintf("[echo-history] again %d", i), ts)
	}
	e.waitHandOver(t, victimID, victimConvs, handOverDeadline)
	t.Logf("the victim's %d conversations were taken over %s after the stop", len(victimConvs),
		time.Since(stopped).Round(10*time.Millisecond))
	deadline := handOverDeadline.Add(budget)
	within := deadline.Sub(stopped)
	for i, ts := range tss {
		want := fmt.Sprintf("history: hello %d", i)
		if err := e.slack.WaitFor(func() bool { return e.postsWith(ts, want) > 0 }, time.Until(deadline)); err != nil {
			t.Fatalf("conversation %d did not answer with its history within %s of the stop: %v\nposts: %s", i, within, err, e.dump())
		}
	}
	t.Logf("every conversation answered %s after the stop", time.Since(stopped).Round(10*time.Millisecond))

	// The interrupted message reached an agent again and was answered;
	// after a graceful stop, the victim finished it instead.
	redelivered := func(r fakemodel.Request) bool {
		return r.Time.After(stopped) && strings.Contains(fakemodel.LastUserText(r), "mid-turn")
	}
	if !graceful {
		if _, err := e.model.WaitForRequest(ctxTimeout(t, e2eWait), redelivered); err != nil {
			t.Errorf("the interrupted message was not delivered again: %v", err)
		}
	}
	if graceful {
		e.waitAnswer(t, busy, "pong: [slow 40] [slowms 100] mid-turn")
	}
	// No reply twice: each answer is in one post.
	time.Sleep(2 * time.Second) // a duplicate would come at once
	if graceful {
		if n := e.postsWith(busy, "pong: [slow 40] [slowms 100] mid-turn", " · $"); n != 1 {
			t.Errorf("the running turn was answered %d times, want once\nposts: %s", n, e.dump())
		}
		if slices.ContainsFunc(e.model.Requests(), redelivered) {
			t.Error("the running turn was interrupted and delivered again after a graceful stop")
		}
	}
	for i, ts := range tss {
		for _, s := range []string{fmt.Sprintf("pong: hello %d", i), fmt.Sprintf("history: hello %d", i)} {
			if n := e.postsWith(ts, s); n != 1 {
				t.Errorf("thread %d has %d posts with %q, want 1\nposts: %s", i, n, s, e.dump())
			}
		}
	}
	// The survivors hold every conversation between them.
	var all []string
	for i, p := range e.procs {
		if i != victim {
			_, held := e.held(t, p) // a stopped replica's /healthz is gone
			all = append(all, held...)
		}
	}
	slices.Sort(all)
	if got := len(slices.Compact(all)); got != convs {
		t.Errorf("the surviving replicas hold %d conversations, want %d", got, convs)
	}
}

// waitHandOver waits until other replicas than victim hold every one of
// convs, failing at deadline.
func (e *replicaEnv) waitHandOver(t *testing.T, victim string, convs []string, deadline time.Time) {
	t.Helper()
	st, err := store.OpenPostgres(context.Background(), e.dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	testkit.WaitUntilSeen(t, fmt.Sprintf("the victim's %d conversations taken over", len(convs)), time.Until(deadline), func() (bool, string) {
		ls, err := st.Leases(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		taken := 0
		for _, l := range ls {
			if l.Owner != victim && slices.Contains(convs, strings.TrimPrefix(l.Resource, "conversation:")) {
				taken++
			}
		}
		return taken == len(convs), fmt.Sprintf("%d taken over; leases: %+v", taken, ls)
	})
}

// TestSlackReplicasFailoverKill: three replicas, ten conversations; the
// replica holding the most is SIGKILLed in the middle of a turn. Its
// conversations move once the lease (3 s) expires (within lease + 2 s: a
// poll), and every conversation answers its next message with its history
// within that plus agentStartBudget (10 s on an idle machine); the
// interrupted message is delivered again; no reply is posted twice.
func TestSlackReplicasFailoverKill(t *testing.T) {
	t.Parallel()
	const lease = 3 * time.Second
	failover(t, lease, lease+2*time.Second, func(p *bridgeProc) { p.kill9() }, false)
}

// TestSlackReplicasFailoverStop: the same with a graceful stop (SIGTERM):
// the replica finishes its running turn (about 4 s) and answers it, then
// hands its leases over, so its conversations move within 8 s of the
// SIGTERM on an idle machine (longer by its load: handOverBy), always
// before the first of its leases (30 s) could expire.
func TestSlackReplicasFailoverStop(t *testing.T) {
	t.Parallel()
	const lease = 30 * time.Second
	var victim *bridgeProc
	failover(t, lease, 8*time.Second, func(p *bridgeProc) {
		victim = p
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		// The next messages only once it drains: before, it takes and
		// answers them itself (a busy machine was slow to act on the
		// signal), and nothing of those conversations is left to hand over.
		if !p.waitLog(ctxTimeout(t, e2eWait), "graceful stop: finishing the running turns") {
			t.Fatalf("the stopped replica never began its graceful stop\nlogs:\n%s", p.logs)
		}
	}, true)
	select {
	case <-victim.done:
		if victim.exitErr != nil {
			t.Errorf("the stopped replica exited with %v", victim.exitErr)
		}
	case <-time.After(60 * time.Second):
		t.Error("the stopped replica did not exit within 60 s of SIGTERM")
	}
}
