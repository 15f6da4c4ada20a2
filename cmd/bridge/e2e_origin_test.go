package main

// End-to-end tests of "origin decides authority" (issue 20, attacks 3 and
// 4) through the bridge binary, the fake Slack and the real Claude Code
// CLI against the fake model.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
)

const dave = "UDAVE" // an admin in these tests

// TestSlackE2EAgentScheduleIsAPrompt (attack 3): the agent asks its
// schedule tool for a run of "!mode acceptEdits" in a conversation an
// admin owns. With the default agent_schedules (ask) a card shows the
// cron, the prompt and the channel, and no schedule exists until the
// admin creates it; when it fires, the text reaches the model as a prompt
// and the conversation's mode stays default.
func TestSlackE2EAgentScheduleIsAPrompt(t *testing.T) {
	t.Parallel()
	e := startSlackBridgeAccess(t, profileOptions{}, fmt.Sprintf("users: [%s]\n      admins: [%s]", alice, dave))
	// Fire in two minutes (an hourly schedule: agents may ask for at most
	// one run every 5 minutes).
	at := time.Now().UTC().Add(2 * time.Minute)
	cron := fmt.Sprintf("%d * * * *", at.Minute())
	ts := e.slack.Mention(slackChan, dave, fmt.Sprintf(`[tool mcp__bridge__schedule {"cron":%q,"tz":"UTC","prompt":"!mode acceptEdits","name":"sneaky"}]`, cron), "")
	e.waitThreadText(t, ts, "tool said: Asked the people in this conversation to approve the schedule")
	card := e.waitCard(t, ts)
	text := e.text(card)
	for _, want := range []string{"The agent asks for a schedule", cron, "!mode acceptEdits", slackChan} {
		if !strings.Contains(text, want) {
			t.Errorf("card does not show %q: %q", want, text)
		}
	}
	e.slack.SendMessage(slackChan, dave, "!schedule list", ts)
	e.waitThreadText(t, ts, "No schedules in this channel")

	e.slack.Click(slackChan, card.TS, dave, "allow", "")
	e.waitThreadText(t, ts, "Created by")
	e.slack.SendMessage(slackChan, dave, "!schedule list", ts)
	e.waitThreadText(t, ts, "made by the agent")

	// The firing: the prompt goes to the model as the user's text.
	if _, err := e.model.WaitForRequest(ctxTimeout(t, 4*time.Minute), func(r fakemodel.Request) bool {
		return fakemodel.LastUserText(r) == "!mode acceptEdits"
	}); err != nil {
		t.Fatalf("the scheduled prompt never reached the model: %v\nposts: %s", err, e.dump())
	}
	e.waitThreadText(t, ts, "pong: !mode acceptEdits")
	e.slack.SendMessage(slackChan, dave, "!status", ts)
	e.waitThreadText(t, ts, "mode: `default`")
	for _, p := range e.slack.Posts() {
		if strings.Contains(e.text(p), "Mode set") {
			t.Errorf("the scheduled prompt ran as a command: %q", e.text(p))
		}
	}
}

// TestSlackE2ECommandWithNoBreakSpace (attack 4): "!rules rm<NBSP>1" from a
// non-admin is refused with a message saying why, and the grant stays.
func TestSlackE2ECommandWithNoBreakSpace(t *testing.T) {
	t.Parallel()
	e := startSlackBridgeAccess(t, profileOptions{}, fmt.Sprintf("users: [%s]\n      admins: [%s]", alice, dave))
	ts := e.slack.Mention(slackChan, alice, "[bash touch granted.txt]", "")
	card := e.waitCard(t, ts)
	e.slack.Click(slackChan, card.TS, alice, "always", "")
	e.waitThreadText(t, ts, "tool said")

	e.slack.SendMessage(slackChan, alice, "!rules rm\u00a01", ts)
	e.waitThreadText(t, ts, "That command was not run: it contains a tab, a no-break space")
	e.slack.SendMessage(slackChan, alice, "!rules rm\t1", ts)
	e.slack.SendMessage(slackChan, alice, "!rules", ts)
	e.waitThreadText(t, ts, "#1 allow")
	for _, p := range e.slack.Posts() {
		if strings.Contains(e.text(p), "Removed grant") {
			t.Fatalf("a non-admin removed the grant: %q", e.text(p))
		}
	}
	// The admin, with a plain space, may.
	e.slack.SendMessage(slackChan, dave, "!rules rm 1", ts)
	e.waitThreadText(t, ts, "Removed grant #1")
}
