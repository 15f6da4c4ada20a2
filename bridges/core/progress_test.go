package core_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// slowScript starts a turn on "slow", calls Bash and answers only once
// release is closed; anything else is answered at once.
func slowScript(release <-chan struct{}) bridgetest.Script {
	return func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		if m.Text != "slow" {
			s.Reply(m, "pong: "+m.Text)
			return
		}
		// The tool call starts the turn: once the platform shows typing,
		// the worker has taken it.
		s.Emit(streamjson.ToolUse{ID: "tu-1", Name: "Bash", Input: []byte(`{"command":"make test"}`)})
		<-release
		s.Reply(m, "done")
	}
}

// progressLines are the progress lines posted in k, oldest first.
func progressLines(p *bridgetest.Platform, k bridges.ConversationKey) []string {
	var out []string
	for _, m := range p.Messages(k) {
		if strings.HasPrefix(m.Text, "⏳ Still working") {
			out = append(out, m.Text)
		}
	}
	return out
}

// On a platform without live edits a long turn posts a short progress
// line every Limits.ProgressInterval (not before), naming its latest tool
// call, and none once the turn is over; a platform that streams the turn
// gets none.
func TestProgressLinesWithoutLiveEdits(t *testing.T) {
	for _, streams := range []bool{false, true} {
		name := map[bool]string{false: "without edits", true: "streaming"}[streams]
		t.Run(name, func(t *testing.T) {
			clock := bridgetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			release := make(chan struct{})
			lim := defaultLimits()
			lim.ProgressInterval = 30 * time.Second
			h := start(t, setup{script: slowScript(release), clock: clock, limits: lim, noEdit: !streams})
			defer func() {
				select {
				case <-release:
				default:
					close(release)
				}
			}()
			k := key("T1")
			h.send(k, "m1", "alice", "slow")
			testkit.WaitUntil(t, "the turn's tool call", waitTimeout, func() bool { return h.plat.Typing(k) })
			clock.Advance(29 * time.Second)
			clock.Advance(time.Second)
			if streams {
				h.waitText(k, "Bash: make test") // the live message shows it
			} else {
				first := h.waitText(k, "⏳ Still working")
				if first.Text != "⏳ Still working… 30s so far · last: `Bash: make test`" {
					t.Errorf("first progress line %q", first.Text)
				}
				clock.Advance(30 * time.Second)
				h.waitText(k, "⏳ Still working… 1m so far")
			}
			close(release)
			h.waitText(k, "done")
			clock.Advance(2 * time.Minute)
			h.send(k, "m2", "alice", "ping")
			h.waitText(k, "pong: ping") // after any progress line the timers queued
			want := map[bool]int{false: 2, true: 0}[streams]
			if got := progressLines(h.plat, k); len(got) != want {
				t.Errorf("progress lines %q, want %d", got, want)
			}
		})
	}
}

// Issue 24, finding 4: on a platform that edits but wants whole answers
// (WhatsApp) a 10-minute turn shows one progress message, edited every
// interval, and its answer as a new message; beyond the edit window the
// progress line is posted anew, once. Before, it posted one message per
// interval (≈ 20 identical "Still working" messages in 10 minutes).
func TestProgressLineEditedWithinEditWindow(t *testing.T) {
	clock := bridgetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	release := make(chan struct{})
	defer close(release)
	lim := defaultLimits()
	lim.CanButtons, lim.WholeAnswers = false, true
	lim.ProgressInterval, lim.EditMaxAge = 30*time.Second, 18*time.Minute
	h := start(t, setup{script: slowScript(release), clock: clock, limits: lim})
	k := key("T1")
	h.send(k, "m1", "alice", "slow")
	testkit.WaitUntil(t, "the turn's tool call", waitTimeout, func() bool { return h.plat.Typing(k) })
	shown := func() int { // texts the progress messages showed, edits included
		n := 0
		for _, m := range h.plat.Messages(k) {
			if strings.HasPrefix(m.Text, "⏳ Still working") {
				n += len(m.History)
			}
		}
		return n
	}
	for i := 1; i <= 20; i++ { // 10 minutes
		clock.Advance(30 * time.Second)
		testkit.WaitUntil(t, "a progress update", waitTimeout, func() bool { return shown() == i })
	}
	if got := progressLines(h.plat, k); len(got) != 1 || got[0] != "⏳ Still working… 10m so far · last: `Bash: make test`" {
		t.Fatalf("progress messages after 10 minutes %q, want one, edited", got)
	}
	for i := 21; i <= 40; i++ { // past the edit window: one new message
		clock.Advance(30 * time.Second)
		testkit.WaitUntil(t, "a progress update", waitTimeout, func() bool { return shown() == i })
	}
	if got := progressLines(h.plat, k); len(got) != 2 {
		t.Errorf("progress messages after 20 minutes %q, want two (the first can no longer be edited)", got)
	}
	release <- struct{}{}
	answer := h.waitText(k, "done")
	if answer.Edits != 0 || strings.Contains(answer.Text, "Still working") {
		t.Errorf("the answer %+v must be a new message (edits do not notify)", answer)
	}
}
