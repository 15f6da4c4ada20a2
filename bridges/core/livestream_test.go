package core_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// streamingSetup is a core on a fake clock over a platform that streams,
// with a one-second edit interval and status_delay.
func streamingSetup(t *testing.T, script bridgetest.Script) (*harness, *bridgetest.Streaming, *bridgetest.FakeClock) {
	t.Helper()
	clock := bridgetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	lim := defaultLimits()
	lim.EditInterval = time.Second
	plat := bridgetest.New(lim)
	plat.SetClock(clock.Now)
	sp := bridgetest.WithStreams(plat)
	h := start(t, setup{script: script, clock: clock, streaming: sp, limits: lim, statusDelay: time.Second})
	return h, sp, clock
}

// A 30 s answer is streamed natively: one stream (start, appends at most
// once per edit interval, stop with the footer), no post and no edit; the
// whole turn stays within 1 + duration/edit_interval + 2 platform calls.
func TestLongAnswerUsesNativeStream(t *testing.T) {
	step := make(chan string)
	h, sp, clock := streamingSetup(t, streamScript(step))
	k := key("T1")
	h.send(k, "m1", "alice", "stream for 30 seconds")
	h.session(1)
	const total, tick = 30 * time.Second, 100 * time.Millisecond
	final := h.streamWords(step, clock, k, total, tick)
	if !strings.Contains(final.Text, "word0 ") || !strings.Contains(final.Text, "word299") {
		t.Errorf("streamed answer incomplete: %q", truncateTest(final.Text, 200))
	}
	testkit.WaitUntil(t, "the indicator to clear", waitTimeout, func() bool { return !h.plat.Typing(k) })
	calls := h.plat.CallsOf(k)
	counts := map[string]int{}
	for _, c := range calls {
		counts[c.Op]++
	}
	limit := 1 + int(total/time.Second) + 2
	t.Logf("30 s stream: %d calls %v (limit %d)", len(calls), counts, limit)
	if len(calls) > limit {
		t.Errorf("%d platform calls, want at most %d: %s", len(calls), limit, ops(calls))
	}
	if counts["stream-start"] != 1 || counts["stream-stop"] != 1 || counts["post"] != 0 || counts["edit"] != 0 || counts["stream-append"] < 10 {
		t.Errorf("calls %v: want one stream with appends, no post or edit", counts)
	}
	if n := len(h.plat.Messages(k)); n != 1 {
		t.Errorf("%d messages, want the one stream", n)
	}
	if st := sp.Starts(); len(st) != 1 || st[0].ReplyTo != "m1" || st[0].User != "alice" {
		t.Errorf("stream started as %+v, want replying to m1 for alice", st)
	}
	h.waitOutboxEmpty()
}

// A quick turn is still one post on a platform that streams.
func TestQuickTurnDoesNotStream(t *testing.T) {
	h, _, _ := streamingSetup(t, nil)
	k := key("T1")
	h.send(k, "m1", "alice", "hello")
	h.waitText(k, "pong: hello")
	h.waitLedgerFinal(k)
	h.send(k, "m2", "alice", "again")
	h.waitText(k, "pong: again")
	h.waitLedgerFinal(k)
	if got := ops(h.plat.CallsOf(k)); got != "post post" {
		t.Errorf("calls = %q, want one post per quick turn", got)
	}
}

// Tool calls are tasks of the stream: shown running, then complete.
func TestStreamShowsToolsAsTasks(t *testing.T) {
	step := make(chan struct{})
	script := func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted})
		s.Emit(streamjson.TextDelta{Text: "Let me look."})
		s.Emit(streamjson.AssistantText{Text: "Let me look."})
		s.Emit(streamjson.ToolUse{ID: "t1", Name: "Bash", Input: json.RawMessage(`{"command":"git status"}`)})
		<-step
		s.Emit(streamjson.ToolResult{ToolUseID: "t1", Content: "clean"})
		<-step
		s.Emit(streamjson.TextDelta{Text: "All clean."})
		s.Emit(streamjson.AssistantText{Text: "All clean."})
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleCompleted})
		s.Emit(streamjson.Result{Subtype: "success", Text: "All clean.", Duration: 3 * time.Second, CostUSD: 0.01})
	}
	h, _, clock := streamingSetup(t, script)
	k := key("T1")
	h.send(k, "m1", "alice", "check")
	h.session(1)
	testkit.WaitUntil(t, "the turn's timers", waitTimeout, func() bool { return clock.Pending() >= 1 })
	clock.Advance(time.Second)
	h.plat.WaitFor(t, k, waitTimeout, "the running task", func(m bridgetest.Msg) bool {
		return strings.Contains(m.Text, "Let me look.") && strings.Contains(m.Text, "[in_progress] Bash: git status")
	})
	step <- struct{}{}
	testkit.WaitUntil(t, "the result's flush", waitTimeout, func() bool { return clock.Pending() >= 1 })
	clock.Advance(time.Second)
	h.plat.WaitFor(t, k, waitTimeout, "the complete task", func(m bridgetest.Msg) bool {
		return strings.Contains(m.Text, "[complete] Bash: git status")
	})
	step <- struct{}{}
	final := h.waitText(k, "_3.0s · $0.0100_")
	if !strings.Contains(final.Text, "All clean.") || len(h.plat.Messages(k)) != 1 {
		t.Errorf("final stream %q in %d messages, want the answer and footer in the one stream", final.Text, len(h.plat.Messages(k)))
	}
}

// Where the platform refuses to stream, the turn is posted and edited.
func TestRefusedStreamFallsBackToEdits(t *testing.T) {
	step := make(chan string)
	h, sp, clock := streamingSetup(t, streamScript(step))
	sp.Refuse(func(bridges.ConversationKey) bool { return true })
	k := key("T1")
	h.send(k, "m1", "alice", "stream")
	h.session(1)
	h.streamWords(step, clock, k, 30*time.Second, 250*time.Millisecond)
	posts, edits := h.plat.Count()
	if posts != 1 || edits < 3 || len(sp.Starts()) != 0 {
		t.Errorf("posts=%d edits=%d streams=%d, want the live message posted and edited", posts, edits, len(sp.Starts()))
	}
}

// An answer longer than a message streams up to the limit (code blocks
// closed), then is posted in full as usual: nothing is lost.
func TestStreamOverflowPostsTheAnswer(t *testing.T) {
	step := make(chan string)
	clock := bridgetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	lim := defaultLimits()
	lim.EditInterval, lim.MaxMessageRunes = time.Second, 500
	plat := bridgetest.New(lim)
	plat.SetClock(clock.Now)
	h := start(t, setup{script: streamScript(step), clock: clock, streaming: bridgetest.WithStreams(plat), limits: lim})
	k := key("T1")
	h.send(k, "m1", "alice", "long")
	h.session(1)
	step <- "```go\n"
	for i := range 300 {
		step <- "x := " + strings.Repeat("y", i%7) + "\n"
		if i%10 == 0 {
			clock.Advance(time.Second)
		}
	}
	step <- "```\nDone."
	close(step)
	h.waitText(k, "_30.0s · $0.0123_")
	h.waitOutboxEmpty()
	ms := h.plat.Messages(k)
	if len(ms) < 3 {
		t.Fatalf("%d messages, want the stream and the answer in parts", len(ms))
	}
	for i, m := range ms {
		if n := len([]rune(m.Text)); n > lim.MaxMessageRunes+20 {
			t.Errorf("message %d has %d runes", i, n)
		}
		if strings.Count(m.Text, "```")%2 != 0 {
			t.Errorf("message %d has an open code block: %q", i, truncateTest(m.Text, 120))
		}
	}
	if !strings.Contains(ms[len(ms)-1].Text, "Done.") {
		t.Error("the answer's end was not posted")
	}
}
