package core_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/config/profile"
)

// A decided card is edited where the platform can still edit it; otherwise
// (no Editor, or older than Limits.EditMaxAge) the status is posted as a
// new message quoting the card, and the card stays as it was.
func TestDecisionEditsCardOrPostsStatus(t *testing.T) {
	tests := []struct {
		name     string
		noEdit   bool
		maxAge   time.Duration
		age      time.Duration // how long after posting the card is decided
		wantEdit bool
	}{
		{"editor without age limit", false, 0, 3 * time.Hour, true},
		{"editor, card younger than EditMaxAge", false, 15 * time.Minute, 5 * time.Minute, true},
		{"editor, card older than EditMaxAge", false, 15 * time.Minute, 16 * time.Minute, false},
		{"platform cannot edit", true, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := bridgetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			lim := defaultLimits()
			lim.EditMaxAge = tt.maxAge
			h := start(t, setup{script: toolScript, clock: clock, limits: lim, noEdit: tt.noEdit,
				profile: func(a *profile.Agent) { a.ApprovalTimeout = 24 * time.Hour }})
			k := key("T1")
			h.send(k, "m1", "alice", "bash: make deploy")
			card := h.waitCard(k, "make deploy")
			clock.Advance(tt.age)
			if _, err := h.plat.Click(ctxT(t), k, card.CardID, bridges.ChoiceAllow, "alice", "alice"); err != nil {
				t.Fatal(err)
			}
			h.waitText(k, "allowed")
			status := h.plat.WaitFor(t, k, waitTimeout, "the decision shown", func(m bridgetest.Msg) bool {
				return strings.Contains(m.Text, "✅ Allowed by @alice")
			})
			now := h.plat.Messages(k)[0]
			if now.Ref.ID != card.Ref.ID {
				t.Fatalf("first message is %s, want the card %s", now.Ref.ID, card.Ref.ID)
			}
			if tt.wantEdit {
				if status.Ref.ID != card.Ref.ID || now.Edits != 1 || len(now.Buttons) != 0 {
					t.Errorf("card not edited into its status: status in %s, card %+v", status.Ref.ID, now)
				}
				return
			}
			if status.Ref.ID == card.Ref.ID || now.Edits != 0 {
				t.Fatalf("card edited (%d edits) although it could not be", now.Edits)
			}
			if status.ReplyTo != card.Ref.ID || status.Text != "✅ Allowed by @alice" || len(status.Buttons) != 0 {
				t.Errorf("status posted instead = %+v, want a short message quoting %s", status, card.Ref.ID)
			}
		})
	}
}

// A turn streamed longer than Limits.EditMaxAge continues in a new message
// instead of editing one that is too old; the final answer is complete.
func TestStreamPastEditMaxAge(t *testing.T) {
	clock := bridgetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	step := make(chan string)
	lim := defaultLimits()
	lim.EditInterval = time.Second
	lim.EditMaxAge = 10 * time.Second
	plat := bridgetest.New(lim)
	plat.SetClock(clock.Now)
	var mu sync.Mutex
	var late []string
	plat.Observe(func(c bridgetest.Call, m bridgetest.Msg) {
		if c.Op == "edit" && c.At.Sub(m.Posted) >= lim.EditMaxAge {
			mu.Lock()
			late = append(late, fmt.Sprintf("%s edited %s after posting", m.Ref.ID, c.At.Sub(m.Posted)))
			mu.Unlock()
		}
	})
	h := start(t, setup{script: streamScript(step), clock: clock, platform: plat, limits: lim})
	k := key("T1")
	h.send(k, "m1", "alice", "stream for 30 seconds")
	h.session(1)
	final := h.streamWords(step, clock, k, 30*time.Second, 250*time.Millisecond)
	if !strings.Contains(final.Text, "word0 ") || !strings.Contains(final.Text, "word119") {
		t.Errorf("final answer incomplete: %q", final.Text)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(late) > 0 {
		t.Errorf("messages edited past EditMaxAge: %v", late)
	}
	if n := len(plat.Messages(k)); n < 3 {
		t.Errorf("%d messages for a 30 s stream with a 10 s edit window, want a new one about every 10 s", n)
	}
}

// The first part of an answer quotes the user's message (Message.ReplyTo =
// Inbound.MsgID); the other parts and the streamed live message of a turn
// quote as documented.
func TestAnswerQuotesTheUserMessage(t *testing.T) {
	long := strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit.\n\n", 30) + "Done."
	t.Run("posted answer, split", func(t *testing.T) {
		lim := defaultLimits()
		lim.MaxMessageRunes = 500
		script := func(s *bridgetest.FakeSession, m streamjson.UserMessage) { s.Reply(m, long) }
		h := start(t, setup{noEdit: true, script: script, limits: lim})
		k := key("T1")
		h.send(k, "m1", "alice", "long please")
		h.waitText(k, "Done.")
		ms := h.plat.Messages(k)
		if len(ms) < 2 {
			t.Fatalf("%d messages, want a split answer", len(ms))
		}
		for i, m := range ms {
			if want := map[bool]string{true: "m1", false: ""}[i == 0]; m.ReplyTo != want {
				t.Errorf("part %d quotes %q, want %q", i, m.ReplyTo, want)
			}
		}
	})
	t.Run("streamed answer", func(t *testing.T) {
		step := make(chan string)
		h := start(t, setup{script: streamScript(step)})
		k := key("T1")
		h.send(k, "m7", "alice", "go")
		h.session(1)
		step <- "partial "
		live := h.waitText(k, "partial")
		if live.ReplyTo != "m7" {
			t.Errorf("live message quotes %q, want m7", live.ReplyTo)
		}
		step <- "rest"
		close(step)
		h.waitText(k, "partial rest")
		if n := len(h.plat.Messages(k)); n != 1 {
			t.Errorf("%d messages, want the answer in the live message", n)
		}
	})
}
