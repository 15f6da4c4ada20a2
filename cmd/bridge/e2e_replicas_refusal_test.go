package main

import (
	"strings"
	"testing"
	"time"
)

// TestSlackReplicasClickRefusedPrivately: two replicas; a permission card
// is open in alice's thread. Eve, who may not decide it, clicks it twice;
// Slack hands the clicks to both replicas' connections, so one reaches a
// replica that does not run the conversation and is forwarded to the one
// that does. Each click gets its private refusal (chat.postEphemeral to
// eve in the thread), the card stays open, and alice's click decides it.
func TestSlackReplicasClickRefusedPrivately(t *testing.T) {
	t.Parallel()
	e := startReplicas(t, 2, 30*time.Second)
	ts := e.slack.Mention(slackChan, alice, "[bash echo refused >> refusal.txt]", "")
	card := e.waitCard(t, ts)

	var conns []int
	for range 2 {
		id := e.slack.Click(slackChan, card.TS, stranger, "allow", "")
		if _, err := e.slack.WaitForAck(id, e2eWait); err != nil {
			t.Fatal(err)
		}
		env, _ := e.slack.Envelope(id)
		conns = append(conns, env.Conn)
	}
	if conns[0] == conns[1] {
		t.Fatalf("both clicks went to connection %d, want both replicas", conns[0])
	}
	refusals := func() int {
		n := 0
		for _, m := range e.slack.Ephemerals() {
			if m.User == stranger && m.ThreadTS == ts && strings.Contains(m.Text, "can answer this request") {
				n++
			}
		}
		return n
	}
	if err := e.slack.WaitFor(func() bool { return refusals() == 2 }, e2eWait); err != nil {
		t.Fatalf("eve got %d private refusals for two clicks, want 2: %v\nephemerals: %+v", refusals(), err, e.slack.Ephemerals())
	}
	if cur, _ := e.slack.Current(card.Channel, card.TS); len(cur.Buttons) == 0 {
		t.Fatalf("eve's clicks closed the card: %q", e.text(cur))
	}
	e.slack.Click(slackChan, card.TS, alice, "allow", "")
	e.waitAnswer(t, ts, "tool said")
	time.Sleep(time.Second) // a late third refusal would come at once
	if n := refusals(); n != 2 {
		t.Errorf("eve got %d private refusals, want 2", n)
	}
}
