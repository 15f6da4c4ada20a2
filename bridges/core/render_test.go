package core_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// streamScript streams deltas paced by the test: one delta per value read
// from step, then a result.
func streamScript(step <-chan string) bridgetest.Script {
	return func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted})
		var all strings.Builder
		for d := range step {
			all.WriteString(d)
			s.Emit(streamjson.TextDelta{Text: d})
		}
		s.Emit(streamjson.AssistantText{Text: all.String()})
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleCompleted})
		s.Emit(streamjson.Result{Subtype: "success", Text: all.String(), Duration: 30 * time.Second, CostUSD: 0.0123})
	}
}

func TestStreamedAnswerRespectsEditBudget(t *testing.T) {
	clock := bridgetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	step := make(chan string)
	lim := defaultLimits()
	lim.EditInterval = time.Second
	plat := bridgetest.New(lim)
	plat.SetClock(clock.Now)
	h := start(t, setup{script: streamScript(step), clock: clock, platform: plat, limits: lim, statusDelay: time.Second})
	k := key("T1")
	h.send(k, "m1", "alice", "stream for 30 seconds")
	h.session(1)

	// 30 s of streaming: a delta every 100 ms.
	const total, tick = 30 * time.Second, 100 * time.Millisecond
	final := h.streamWords(step, clock, k, total, tick)
	if !strings.Contains(final.Text, "word0 ") || !strings.Contains(final.Text, "word299") {
		t.Errorf("final answer incomplete: %q", truncateTest(final.Text, 200))
	}
	testkit.WaitUntil(t, "the indicator to clear", waitTimeout, func() bool { return !h.plat.Typing(k) })
	// Every platform call counts, the working indicator's included.
	all := plat.CallsOf(k)
	posts, edits := plat.Count()
	limit := 1 + int(total/lim.EditInterval) + 2
	t.Logf("30 s stream: %d calls: %d posts, %d edits (limit %d)", len(all), posts, edits, limit)
	if len(all) > limit {
		t.Errorf("%d platform calls for a 30 s stream, want at most %d: %s", len(all), limit, ops(all))
	}
	if edits < 10 {
		t.Errorf("only %d edits: the answer was not streamed", edits)
	}
	// No two posts or edits closer than the interval, except the final answer.
	// A call's time is read from the fake clock when the platform records it,
	// while streamWords advances that clock one tick per millisecond or two
	// alongside: on a loaded machine a call can be stamped a tick or two
	// after the budget granted it (a broken budget gives gaps of one tick).
	var calls []bridgetest.Call
	for _, c := range all {
		if c.Op == "post" || c.Op == "edit" {
			calls = append(calls, c)
		}
	}
	for i := 1; i < len(calls)-1; i++ {
		if gap := calls[i].At.Sub(calls[i-1].At); gap < lim.EditInterval-2*tick {
			t.Errorf("calls %d and %d only %s apart", i-1, i, gap)
		}
	}
	if n := len(plat.Messages(k)); n != 1 {
		t.Errorf("%d messages: the answer should replace the live message", n)
	}
}

func TestNoStreamingWhenPlatformCannotEdit(t *testing.T) {
	lim := defaultLimits()
	step := make(chan string)
	h := start(t, setup{noEdit: true, script: streamScript(step), limits: lim})
	k := key("T1")
	h.send(k, "m1", "alice", "go")
	h.session(1)
	for i := range 20 {
		step <- fmt.Sprintf("part%d ", i)
	}
	close(step)
	h.waitText(k, "part19")
	posts, edits := h.plat.Count()
	if posts != 1 || edits != 0 {
		t.Errorf("posts=%d edits=%d, want exactly one post and no edits", posts, edits)
	}
}

func TestLongAnswerSplit(t *testing.T) {
	long := strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit.\n\n", 40) +
		"```go\n" + strings.Repeat("fmt.Println(\"x\")\n", 60) + "```\nDone."
	script := func(s *bridgetest.FakeSession, m streamjson.UserMessage) { s.Reply(m, long) }
	lim := defaultLimits()
	lim.MaxMessageRunes = 500
	h := start(t, setup{noEdit: true, script: script, limits: lim})
	k := key("T1")
	h.send(k, "m1", "alice", "long please")
	h.waitText(k, "Done.")
	ms := h.plat.Messages(k)
	if len(ms) < 5 {
		t.Fatalf("%d messages for a %d-rune answer", len(ms), len(long))
	}
	for i, m := range ms {
		if n := len([]rune(m.Text)); n > lim.MaxMessageRunes {
			t.Errorf("message %d has %d runes", i, n)
		}
		if strings.Count(m.Text, "```")%2 != 0 {
			t.Errorf("message %d has unbalanced fences: %q", i, m.Text)
		}
	}
	if !strings.Contains(ms[len(ms)-1].Text, "$0.0010") {
		t.Error("the footer is not on the last chunk")
	}
}

func TestVerbosity(t *testing.T) {
	toolTurn := func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted})
		s.Emit(streamjson.TextDelta{Text: "Let me look."})
		s.Emit(streamjson.AssistantText{Text: "Let me look."})
		s.Emit(streamjson.ToolUse{ID: "t1", Name: "Bash", Input: json.RawMessage(`{"command":"git status"}`)})
		s.Emit(streamjson.ToolResult{ToolUseID: "t1", Content: "On branch main\nnothing to commit"})
		s.Emit(streamjson.ToolUse{ID: "t2", Name: "Edit", Input: json.RawMessage(`{"file_path":"/srv/project/main.go","old_string":"a","new_string":"b"}`)})
		s.Emit(streamjson.TextDelta{Text: "All clean."})
		s.Emit(streamjson.AssistantText{Text: "All clean."})
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleCompleted})
		s.Emit(streamjson.Result{Subtype: "success", Text: "All clean.", Duration: 4200 * time.Millisecond, CostUSD: 0.0123})
	}
	tests := []struct {
		verbosity string
		want      []string // somewhere in the thread
		not       []string
	}{
		{"quiet", []string{"All clean."}, []string{"git status", "main.go", "$0.0123", "Let me look"}},
		{"compact", []string{"› `Bash: git status`", "› `Edit: main.go`", "Let me look.", "All clean.\n\n_4.2s · $0.0123_"}, []string{"On branch main"}},
		{"full", []string{"› `Bash: git status`", "↳ `On branch main (+1 lines)`", "_4.2s · $0.0123_"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.verbosity, func(t *testing.T) {
			h := start(t, setup{script: toolTurn, verbosity: tt.verbosity})
			k := key("T1")
			h.send(k, "m1", "alice", "check")
			h.waitText(k, "All clean.")
			h.waitLedgerFinal(k)
			if tt.verbosity != "quiet" {
				h.waitText(k, "_4.2s · $0.0123_") // the reply, posted after the live message's final edit
			}
			var all strings.Builder
			for _, m := range h.plat.Messages(k) {
				all.WriteString(m.Text + "\n---\n")
			}
			for _, w := range tt.want {
				if !strings.Contains(all.String(), w) {
					t.Errorf("thread lacks %q:\n%s", w, all.String())
				}
			}
			for _, w := range tt.not {
				if strings.Contains(all.String(), w) {
					t.Errorf("thread shows %q:\n%s", w, all.String())
				}
			}
		})
	}
}

func TestOutboxRetriesUntilPosted(t *testing.T) {
	clock := bridgetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	lim := defaultLimits()
	plat := bridgetest.New(lim)
	var fails atomic.Int32
	plat.FailPosts(func(_ bridges.ConversationKey, m bridges.Message) error {
		if strings.Contains(m.Text, "pong") && fails.Add(1) <= 3 {
			return errors.New("HTTP 503")
		}
		return nil
	})
	h := start(t, setup{noEdit: true, clock: clock, platform: plat, limits: lim, outboxBackoff: time.Second})
	k := key("T1")
	h.send(k, "m1", "alice", "hello")
	testkit.WaitUntil(t, "the first failure", waitTimeout, func() bool { return fails.Load() >= 1 })
	for _, d := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} { // exponential backoff
		testkit.WaitUntil(t, "the retry timer", waitTimeout, func() bool { return clock.Pending() == 1 })
		n := fails.Load()
		clock.Advance(d - time.Millisecond)
		if clock.Pending() != 1 || fails.Load() != n { // timers fire within Advance: the retry's is not due
			t.Fatalf("retried before the %s backoff", d)
		}
		clock.Advance(time.Millisecond)
		testkit.WaitUntil(t, "the next attempt", waitTimeout, func() bool { return fails.Load() == n+1 })
	}
	h.waitText(k, "pong: hello")
	h.waitOutboxEmpty()
}

func truncateTest(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
