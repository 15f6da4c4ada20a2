package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
	"github.com/agentbridge/agentbridge/bridges/app/healthz"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// outageLength is how long the platforms' send APIs answer 503 in the
// outage tests: a real incident lasts minutes (issue 21).
const outageLength = 3 * time.Minute

// What the outage tests must not lose: the answers of two turns that the
// real CLI produced while the platform refused every post and edit. They
// must appear after the outage, each exactly once, the first before the
// second, the first saying it is late; and nothing may be given up
// meanwhile. The two tests take about four minutes each and run in
// parallel.

// slackOutageMethods are the Web API methods that post or change messages.
var slackOutageMethods = []string{"chat.postMessage", "chat.update", "chat.startStream", "chat.appendStream",
	"chat.stopStream", "assistant.threads.setStatus", "reactions.add", "reactions.remove"}

func TestSlackE2EOutageRepliesWait(t *testing.T) {
	t.Parallel()
	e := startSlackBridge(t)
	ts := e.slack.Mention(slackChan, alice, "hello", "")
	e.waitThreadText(t, ts, "pong: hello") // the thread works before the outage
	// The answer is visible while its stream is still open: the outage must
	// begin after the turn ended (its stream stopped), or the late one is
	// this answer's stop, not the answers of the outage.
	if err := e.slack.WaitFor(func() bool {
		for _, p := range e.slack.Posts() {
			if cur, ok := e.slack.Current(p.Channel, p.TS); ok && p.ThreadTS == ts && cur.Stream == slackfake.Streaming {
				return false
			}
		}
		return true
	}, e2eWait); err != nil {
		t.Fatalf("the first answer's stream was never stopped: %v", err)
	}

	e.slack.SetOutage(http.StatusServiceUnavailable, slackOutageMethods...)
	began := time.Now()
	e.slack.SendMessage(slackChan, alice, "first during the outage", ts)
	waitReplies(t, e.bridge, "team", 1)
	e.slack.SendMessage(slackChan, alice, "second during the outage", ts)
	waitReplies(t, e.bridge, "team", 2) // both answers produced, both waiting
	holdOutage(t, e.bridge, began)
	e.slack.SetOutage(0)

	var got []string
	err := e.slack.WaitFor(func() bool {
		got = got[:0]
		for _, p := range e.slack.Posts() {
			if cur, ok := e.slack.Current(p.Channel, p.TS); ok && p.ThreadTS == ts && strings.Contains(e.text(cur), "during the outage") {
				got = append(got, e.text(cur))
			}
		}
		return len(got) >= 2
	}, 2*time.Minute)
	if err != nil {
		t.Fatalf("the answers never appeared after the outage: %v\nposts: %s", err, e.dump())
	}
	time.Sleep(2 * time.Second) // a duplicate would come right after
	checkLateAnswers(t, "Slack", func() []string {
		var all []string
		for _, p := range e.slack.Posts() {
			if cur, ok := e.slack.Current(p.Channel, p.TS); ok && p.ThreadTS == ts {
				all = append(all, e.text(cur))
			}
		}
		return all
	})
	waitReplies(t, e.bridge, "team", 0)
}

func TestDiscordE2EOutageRepliesWait(t *testing.T) {
	t.Parallel()
	e := startDiscordBridge(t)
	thread := e.startThread(t, "hello")
	e.waitText(t, thread, "pong: hello") // the thread works before the outage
	e.waitText(t, thread, " · $")        // its final reply (with the cost), not only the live text: the turn ended

	e.dc.SetOutage(http.StatusServiceUnavailable, discordfake.RouteCreateMessage, discordfake.RouteEditMessage, discordfake.RouteTyping)
	began := time.Now()
	e.dc.SendMessage(thread, dGuild, dAlice, "first during the outage", false)
	waitReplies(t, e.bridge, "guild", 1)
	e.dc.SendMessage(thread, dGuild, dAlice, "second during the outage", false)
	waitReplies(t, e.bridge, "guild", 2)
	holdOutage(t, e.bridge, began)
	e.dc.SetOutage(0)

	bots := func() []string {
		var out []string
		for _, m := range e.dc.Messages(thread) {
			if m.AuthorIsBot {
				out = append(out, m.Content)
			}
		}
		return out
	}
	var got []string
	err := e.dc.Wait(2*time.Minute, func() bool {
		got = got[:0]
		for _, c := range bots() {
			if strings.Contains(c, "during the outage") {
				got = append(got, c)
			}
		}
		return len(got) >= 2
	})
	if err != nil {
		t.Fatalf("the answers never appeared after the outage: %v\n%s", err, e.dump(thread))
	}
	time.Sleep(2 * time.Second)
	checkLateAnswers(t, "Discord", bots)
	waitReplies(t, e.bridge, "guild", 0)
}

// checkLateAnswers checks the thread's messages mentioning the outage
// (all, read again): the two answers, once each, in order, the first
// with the late note and the second without.
func checkLateAnswers(t *testing.T, platform string, all func() []string) {
	t.Helper()
	var answers []string
	for _, m := range all() {
		if strings.Contains(m, "during the outage") {
			answers = append(answers, m)
		}
	}
	if len(answers) != 2 || !strings.Contains(answers[0], "pong: first during the outage") ||
		!strings.Contains(answers[1], "pong: second during the outage") {
		t.Fatalf("answers after the outage = %q; want the first's then the second's, once each", answers)
	}
	note := fmt.Sprintf("delivered after a %s outage of ", platform)
	if !strings.Contains(answers[0], note) || strings.Contains(answers[1], note) {
		t.Errorf("the first answer must say it is late (%q), the second not: %q", note, answers)
	}
}

// holdOutage keeps the outage until outageLength has passed since began,
// failing at once if the bridge gives a reply up meanwhile.
func holdOutage(t *testing.T, p *bridgeProc, began time.Time) {
	t.Helper()
	for time.Since(began) < outageLength {
		if strings.Contains(p.logs.String(), "giving up") {
			t.Fatalf("a reply was given up %s into the outage", time.Since(began).Round(time.Second))
		}
		time.Sleep(time.Second)
	}
}

// waitReplies waits until the bridge's /metrics and /healthz both say that
// bot has n replies waiting, failing at once if a reply is given up.
func waitReplies(t *testing.T, p *bridgeProc, bot string, n int) {
	t.Helper()
	gauge := fmt.Sprintf("agentbridge_outbox_waiting{bot=%q} %d\n", bot, n)
	testkit.WaitUntilSeen(t, fmt.Sprintf("%d replies waiting for %s", n, bot), e2eWait, func() (bool, string) {
		if strings.Contains(p.logs.String(), "giving up") {
			t.Fatalf("a reply was given up while waiting for %d waiting replies", n)
		}
		metrics := p.metrics(t)
		inMetrics := strings.Contains(metrics, gauge) || n == 0 && !strings.Contains(metrics, fmt.Sprintf("agentbridge_outbox_waiting{bot=%q}", bot))
		waiting := healthWaiting(t, p, bot)
		return inMetrics && waiting == n, fmt.Sprintf("healthz says %d, metrics has the gauge: %v", waiting, inMetrics)
	})
}

// healthWaiting is what /healthz says about bot's waiting replies.
func healthWaiting(t *testing.T, p *bridgeProc, bot string) int {
	t.Helper()
	resp, err := http.Get("http://" + p.addr + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var body healthz.Body
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("/healthz %q: %v", b, err)
	}
	if body.RepliesError != "" {
		t.Fatalf("/healthz replies_error: %s", body.RepliesError)
	}
	for _, r := range body.Replies {
		if r.Bot == bot {
			return r.Waiting
		}
	}
	return 0
}
