package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// TestStatusShowsRepliesWaiting: while a conversation's replies wait out
// an outage, !status says how many, since when (the first failed
// attempt) and the last error; once they are posted it says nothing of
// them.
func TestStatusShowsRepliesWaiting(t *testing.T) {
	clock := bridgetest.NewFakeClock(time.Now())
	lim := defaultLimits()
	plat := bridgetest.New(lim)
	outage := true
	a := &attempts{clock: clock, fail: func(time.Time) error {
		if outage {
			return errors.New("HTTP 503 Service Unavailable")
		}
		return nil
	}}
	a.install(plat)
	h := start(t, setup{noEdit: true, clock: clock, platform: plat, limits: lim, outboxBackoff: time.Minute})
	k := key("T1")
	h.send(k, "m1", "alice", "first")
	testkit.WaitUntil(t, "the first attempt", waitTimeout, func() bool { return a.n() == 1 })
	// Since when, as the store recorded the failure (by its own clock,
	// which may have passed a second boundary since the fake clock began).
	var failedAt time.Time
	testkit.WaitUntil(t, "the failed attempt recorded", waitTimeout, func() bool {
		rows, err := h.st.PendingOutboxForConversation(context.Background(), h.conversation(k).ID)
		if err != nil || len(rows) == 0 || rows[0].Attempts == 0 {
			return false
		}
		failedAt = rows[0].FirstFailedAt
		return true
	})
	h.send(k, "m2", "alice", "second")
	h.waitLedgerFinal(k)
	// To 30 s after the failure as the store recorded it (its clock ran on
	// from the fake clock's start: on a busy machine by more than half a
	// second, and the age showed 29s); still less than the retry's minute.
	clock.Advance(failedAt.Add(30 * time.Second).Sub(clock.Now()))
	h.send(k, "m3", "alice", "!status")
	status := h.waitText(k, "📊 Session")
	want := "• replies waiting to be posted: 2 since " + failedAt.UTC().Format("2006-01-02 15:04:05 UTC") + " (30s ago); last error: "
	if !strings.Contains(status.Text, want) || !strings.Contains(status.Text, "503 Service Unavailable") {
		t.Errorf("!status = %q\nwant a line %q with the error", status.Text, want)
	}

	a.mu.Lock()
	outage = false
	a.mu.Unlock()
	clock.Advance(30 * time.Second)
	h.waitOutboxEmpty()
	h.send(k, "m4", "alice", "!status")
	testkit.WaitUntil(t, "a second status", waitTimeout, func() bool {
		n := 0
		for _, m := range plat.Messages(k) {
			if strings.Contains(m.Text, "📊 Session") {
				n++
				if n == 2 && strings.Contains(m.Text, "replies waiting") {
					t.Errorf("!status after delivery still shows replies waiting: %q", m.Text)
				}
			}
		}
		return n == 2
	})
}

// TestGivenUpInGoneConversationLoggedOnce: when a reply is given up and
// the conversation cannot take the notice either (its channel is gone),
// that is logged as an error once, with the bot and the conversation —
// not once per reply — and each reply still counts as failed.
func TestGivenUpInGoneConversationLoggedOnce(t *testing.T) {
	lim := defaultLimits()
	plat := bridgetest.New(lim)
	plat.FailPosts(func(bridges.ConversationKey, bridges.Message) error {
		return bridges.Permanent(errors.New("channel_not_found"))
	})
	h := start(t, setup{noEdit: true, platform: plat, limits: lim})
	k := key("T1")
	h.send(k, "m1", "alice", "first")
	h.send(k, "m2", "alice", "second")
	h.waitLedgerFinal(k)
	testkit.WaitUntil(t, "both replies given up", waitTimeout, func() bool {
		return strings.Count(h.logs.String(), "reply could not be posted; giving up") == 2
	})
	h.waitOutboxEmpty()
	logs := h.logs.String()
	var told []string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "could not tell the conversation") && strings.Contains(l, "level=ERROR") {
			told = append(told, l)
		}
	}
	if len(told) != 1 {
		t.Fatalf("%d errors logged about the untold conversation, want 1:\n%s", len(told), strings.Join(told, "\n"))
	}
	conv := h.conversation(k)
	for _, want := range []string{" bot=bot", "conversation=" + conv.ID, "channel_not_found"} {
		if !strings.Contains(told[0], want) {
			t.Errorf("log line lacks %q: %s", want, told[0])
		}
	}
	if strings.Contains(logs, `msg="post notice"`) && strings.Contains(logs, "could not be posted (") {
		t.Errorf("the failed notice was also logged as a plain notice failure")
	}
}
