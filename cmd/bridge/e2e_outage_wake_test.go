package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
)

// wakeOutage is the outage of TestSlackE2EOutageBackWithinSeconds: long
// enough for the outbox's back-off (2 s doubling) to reach half a minute
// and more between attempts, as in the 75 s outage of issue 37.
const wakeOutage = 75 * time.Second

// wakeBound is how soon after the first sign that Slack is back (an event
// received, another call answered) the waiting answer must show: well
// under the back-off's next tick, which is about 50 s away then.
const wakeBound = 10 * time.Second

// TestSlackE2EOutageBackWithinSeconds: an answer made during a 75 s
// outage of Slack's Web API waits; when Slack is back, the first sign of
// it — a message arriving over Socket Mode, its answer posted — sends the
// waiting answer at once, not at the outbox's next back-off tick, and
// once.
func TestSlackE2EOutageBackWithinSeconds(t *testing.T) {
	t.Parallel()
	e := startSlackBridgeBot(t, profileOptions{}, "    verbosity: quiet\n", "users: ["+alice+"]")
	ts := e.slack.Mention(slackChan, alice, "hello", "")
	e.waitThreadText(t, ts, "pong: hello")
	e.waitSettled(t, ts)

	e.slack.SetOutage(http.StatusServiceUnavailable, slackOutageMethods...)
	began := time.Now()
	e.slack.SendMessage(slackChan, alice, "made during the outage", ts)
	waitReplies(t, e.bridge, "team", 1)
	holdOutageFor(t, e.bridge, began, wakeOutage)
	e.slack.SetOutage(0)

	back := time.Now()
	other := e.slack.Mention(slackChan, alice, "!status", "") // a sign: an event, then a post that works
	e.waitThreadText(t, other, "Session")
	if err := e.slack.WaitFor(func() bool { return e.threadPostsWith(ts, "pong: made during the outage") > 0 }, wakeBound); err != nil {
		t.Fatalf("the waiting answer did not show within %s of Slack's return: %v\nposts: %s", wakeBound, err, e.dump())
	}
	t.Logf("the waiting answer showed %s after Slack was back", time.Since(back).Round(10*time.Millisecond))
	waitReplies(t, e.bridge, "team", 0)
	if n := e.threadPostsWith(ts, "pong: made during the outage"); n != 1 {
		t.Errorf("the answer shows %d times, want once\nposts: %s", n, e.dump())
	}
}

// threadPostsWith counts the bot's posts in thread whose current text
// contains sub.
func (e *slackEnv) threadPostsWith(thread, sub string) int {
	n := 0
	for _, p := range e.slack.Posts() {
		if cur, ok := e.slack.Current(p.Channel, p.TS); ok && p.ThreadTS == thread && strings.Contains(e.text(cur), sub) {
			n++
		}
	}
	return n
}

// holdOutageFor keeps the outage until d has passed since began, failing
// at once if the bridge gives a reply up meanwhile.
func holdOutageFor(t *testing.T, p *bridgeProc, began time.Time, d time.Duration) {
	t.Helper()
	for time.Since(began) < d {
		if strings.Contains(p.logs.String(), "giving up") {
			t.Fatalf("a reply was given up %s into the outage", time.Since(began).Round(time.Second))
		}
		time.Sleep(time.Second)
	}
}

// discordOutageRoutes are the REST routes a 75 s Discord outage refuses:
// every call the bridge makes for a conversation.
var discordOutageRoutes = []string{discordfake.RouteCreateMessage, discordfake.RouteEditMessage, discordfake.RouteTyping,
	discordfake.RouteStartThread, discordfake.RouteGetChannel, discordfake.RouteGetMessage}

// TestDiscordE2EOutageBackWithinSeconds: an answer made during a 75 s
// outage of Discord's REST API waits; when Discord is back, the first
// sign of it — a mention arriving over the gateway, its thread started —
// sends the waiting answer at once, in its thread, not at the outbox's
// next back-off tick, and once.
func TestDiscordE2EOutageBackWithinSeconds(t *testing.T) {
	t.Parallel()
	e := startDiscordBridgeWith(t, "    verbosity: quiet\n")
	thread := e.startThread(t, "hello")
	e.waitText(t, thread, "pong: hello")

	e.dc.SetOutage(http.StatusServiceUnavailable, discordOutageRoutes...)
	began := time.Now()
	e.dc.SendMessage(thread, dGuild, dAlice, "made during the outage", false)
	waitReplies(t, e.bridge, "guild", 1)
	holdOutageFor(t, e.bridge, began, wakeOutage)
	e.dc.SetOutage(0)

	back := time.Now()
	other := e.startThread(t, "!status") // a sign: an event, then a thread started and a post that work
	e.waitText(t, other, "Session")
	answered := func() int {
		n := 0
		for _, m := range e.dc.Messages(thread) {
			if m.AuthorIsBot && strings.Contains(m.Text, "pong: made during the outage") {
				n++
			}
		}
		return n
	}
	if err := e.dc.Wait(wakeBound, func() bool { return answered() > 0 }); err != nil {
		t.Fatalf("the waiting answer did not show in its thread within %s of Discord's return: %v\n%s", wakeBound, err, e.dump(thread))
	}
	for _, m := range e.dc.Messages(thread) {
		if m.AuthorIsBot && strings.Contains(m.Text, "pong: made during the outage") {
			t.Logf("the waiting answer showed %s after Discord was back", m.CreatedAt.Sub(back).Round(10*time.Millisecond))
		}
	}
	waitReplies(t, e.bridge, "guild", 0)
	if n := answered(); n != 1 {
		t.Errorf("the answer shows %d times, want once\n%s", n, e.dump(thread))
	}
	for _, m := range e.dc.Messages(dChannel) {
		if m.AuthorIsBot && strings.Contains(m.Text, "made during the outage") {
			t.Errorf("the answer was posted in the channel, not its thread: %q", m.Text)
		}
	}
}
