package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/slack/slackfake"
)

// slackCallsSince counts the Web API calls after the first n, by method,
// leaving out Socket Mode's own (apps.connections.open).
func slackCallsSince(s *slackfake.Server, n int) (map[string]int, int) {
	counts := map[string]int{}
	total := 0
	for _, c := range s.Calls()[n:] {
		if c.Method == "apps.connections.open" {
			continue
		}
		counts[c.Method]++
		total++
	}
	return counts, total
}

// startSlackWith is startSlackBridge with top-level config lines.
func startSlackWith(t *testing.T, top string) *slackEnv {
	t.Helper()
	sl := slackfake.New(t)
	ab := startAgentBridgeWith(t, profileOptions{}, fmt.Sprintf(`%sbots:
  - name: team
    platform: slack
    agent: coder
    slack: { bot_token: "${SLACK_BOT_TOKEN}", app_token: "${SLACK_APP_TOKEN}", api_url: %q }
    access:
      users: [%s]
`, top, sl.URL(), alice), "SLACK_BOT_TOKEN="+slackfake.BotToken, "SLACK_APP_TOKEN="+slackfake.AppToken)
	if err := sl.WaitForConnections(1, e2eWait); err != nil {
		t.Fatalf("bridge never opened a Socket Mode connection: %v", err)
	}
	return &slackEnv{ab: &ab, slack: sl, model: ab.model, bridge: ab.bridge, workdir: ab.workdir}
}

// TestSlackE2EQuickTurnIsOneCall: through the real binary, a follow-up
// that the agent answers within status_delay and the first edit interval
// (1 s) costs exactly one Slack call, chat.postMessage (no thread status
// on or off, no stream). A follow-up slower than that on a loaded machine
// streams by design: it is left out, and two quick ones must be seen.
func TestSlackE2EQuickTurnIsOneCall(t *testing.T) {
	t.Parallel()
	e := startSlackWith(t, "status_delay: 1m\n") // every turn of this test is quicker than that
	ts := e.slack.Mention(slackChan, alice, "hello", "")
	e.waitThreadText(t, ts, "pong: hello")
	e.waitLedgerSettled(t)
	quick := 0
	for i := 0; i < 8 && quick < 2; i++ {
		n := len(e.slack.Calls())
		text := fmt.Sprintf("follow-up %d", i)
		start := time.Now()
		e.slack.SendMessage(slackChan, alice, text, ts)
		e.waitThreadText(t, ts, "pong: "+text)
		took := time.Since(start)
		e.waitLedgerSettled(t)
		counts, total := slackCallsSince(e.slack, n)
		if took > 800*time.Millisecond {
			t.Logf("turn %d took %v (beyond the edit interval, it may stream): %v", i, took, counts)
			continue
		}
		quick++
		if total != 1 || counts["chat.postMessage"] != 1 {
			t.Errorf("turn %d (%v) cost %d Slack calls %v, want exactly one chat.postMessage", i, took, total, counts)
		}
	}
	if quick < 2 {
		t.Errorf("only %d of 8 follow-ups answered within 800 ms", quick)
	}
}

// waitLedgerSettled waits until the bridge reports no turn running: its
// metrics show every accepted message answered.
func (e *slackEnv) waitLedgerSettled(t *testing.T) {
	t.Helper()
	err := e.slack.WaitFor(func() bool {
		m := e.bridge.metricsOrEmpty()
		return metricValue(m, `agentbridge_messages_total{bot="team",outcome="accepted"}`) ==
			metricValue(m, `agentbridge_agent_results_total{bot="team",outcome="ok"}`)
	}, e2eWait)
	if err != nil {
		t.Fatalf("turns never settled: %v", err)
	}
}

// TestSlackE2EStreamsLongAnswer: a streamed answer in a thread goes through
// Slack's native streaming (one chat.startStream, appends, one
// chat.stopStream; no chat.update), and the whole turn stays within
// 1 + duration/edit_interval + 2 calls.
func TestSlackE2EStreamsLongAnswer(t *testing.T) {
	t.Parallel()
	// No thread status in this test (status_delay 1m), so nothing of the
	// turn comes after the stream's stop.
	e := startSlackWith(t, "status_delay: 1m\n")
	ts := e.slack.Mention(slackChan, alice, "hello", "")
	e.waitThreadText(t, ts, "pong: hello")
	e.waitLedgerSettled(t)
	n, before := len(e.slack.Calls()), len(e.slack.Posts())
	start := time.Now()
	e.slack.SendMessage(slackChan, alice, "[slow 40] [slowms 100] a story", ts)
	var streamed slackfake.Message
	err := e.slack.WaitFor(func() bool {
		for _, p := range e.slack.Posts()[before:] { // (a slow first turn streams too)
			if cur, _ := e.slack.Current(p.Channel, p.TS); p.ThreadTS == ts && cur.Stream == slackfake.StreamStopped {
				streamed = cur
				return true
			}
		}
		return false
	}, e2eWait)
	if err != nil {
		t.Fatalf("no stopped stream in the thread: %v\n%s", err, e.dump())
	}
	took := time.Since(start)
	e.waitLedgerSettled(t)
	counts, total := slackCallsSince(e.slack, n)
	limit := 1 + int(took/time.Second) + 1 + 2 // 1 + duration/edit_interval (rounded up) + 2
	t.Logf("%s streamed turn: %d calls %v (limit %d)", took.Round(time.Millisecond), total, counts, limit)
	if counts["chat.startStream"] != 1 || counts["chat.stopStream"] != 1 || counts["chat.update"] != 0 || counts["chat.postMessage"] != 0 {
		t.Errorf("calls %v: want one native stream, no post or update", counts)
	}
	if total > limit {
		t.Errorf("%d calls for a %s turn, want at most %d", total, took, limit)
	}
	if !strings.Contains(streamed.Text, "a story") && !strings.Contains(streamed.Text, "_") {
		t.Errorf("streamed message lacks the answer or footer: %q", streamed.Text)
	}
	if streamed.Recipient != alice {
		t.Errorf("stream addressed to %q, want %s", streamed.Recipient, alice)
	}
}

// metricsOrEmpty fetches /metrics, or "" when the bridge does not answer.
func (p *bridgeProc) metricsOrEmpty() string {
	p.scrapes.Add(1)
	resp, err := http.Get("http://" + p.addr + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// metricValue returns the value of the sample named exactly name ("" when
// absent).
func metricValue(page, name string) string {
	for _, line := range strings.Split(page, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
