package core_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store"
)

// closing is the fake platform with the StreamCloser ability and no
// Streamer (Discord's live messages): CloseStream records what it closed.
type closing struct {
	*bridgetest.Platform
	mu     sync.Mutex
	closed []string // message ids
}

func (c *closing) CloseStream(_ context.Context, ref bridges.MessageRef, note string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = append(c.closed, ref.ID)
	return nil
}

func (c *closing) closedIDs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.closed)
}

// A live message recorded as becoming a reply (its holder died inside
// the edit that makes it the reply) is edited into that reply by whoever
// runs the conversation next, not posted beside it and not closed as cut;
// a live message recorded without a reply is closed (issue 37).
func TestCutLiveMessageBecomesItsReplyOrIsClosed(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bridge.db")
	plat := bridgetest.New(defaultLimits())
	cl := &closing{Platform: plat}
	wrap := func(*bridgetest.Platform) bridges.Platform { return cl }

	h1 := start(t, setup{dbPath: db, platform: plat, wrap: wrap})
	k1, k2 := key("T1"), key("T2")
	h1.send(k1, "m1", "alice", "hello")
	h1.waitText(k1, "pong: hello")
	h1.send(k2, "m2", "alice", "hi")
	h1.waitText(k2, "pong: hi")
	ctx := ctxT(t)
	// What a holder killed inside the final edit leaves: the live message
	// (showing the answer already, or not yet), the reply row unposted,
	// the record naming it.
	live, err := plat.Post(ctx, k1, bridges.Message{Text: "the answer so fa …"})
	if err != nil {
		t.Fatal(err)
	}
	c1 := h1.conversation(k1)
	row, err := h1.st.AddOutbox(ctx, store.OutboxMessage{ConversationID: c1.ID, Text: "the answer so far, and the rest"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h1.st.PutOpenStream(ctx, store.OpenStream{ConversationID: c1.ID, Channel: k1.Channel, Thread: k1.Thread, MessageID: live.ID, ReplyID: row.ID}); err != nil {
		t.Fatal(err)
	}
	// And one killed while editing a live message.
	cut, err := plat.Post(ctx, k2, bridges.Message{Text: "half an answ …"})
	if err != nil {
		t.Fatal(err)
	}
	c2 := h1.conversation(k2)
	if err := h1.st.PutOpenStream(ctx, store.OpenStream{ConversationID: c2.ID, Channel: k2.Channel, Thread: k2.Thread, MessageID: cut.ID}); err != nil {
		t.Fatal(err)
	}
	h1.stop()
	h1.pool.Close()

	h2 := start(t, setup{dbPath: db, platform: plat, wrap: wrap})
	plat.WaitFor(t, k1, waitTimeout, "the live message edited into its reply", func(m bridgetest.Msg) bool {
		return m.Ref.ID == live.ID && m.Text == "the answer so far, and the rest"
	})
	testkit.WaitUntil(t, "the cut live message closed", waitTimeout, func() bool { return slices.Contains(cl.closedIDs(), cut.ID) })
	if slices.Contains(cl.closedIDs(), live.ID) {
		t.Error("the live message that becomes the reply was closed as cut")
	}
	for _, m := range plat.Messages(k1) {
		if m.Ref.ID != live.ID && strings.Contains(m.Text, "and the rest") {
			t.Errorf("the reply was posted beside its live message: %q", m.Text)
		}
	}
	testkit.WaitUntil(t, "the records forgotten", waitTimeout, func() bool {
		ids, err := h2.st.ConversationsWithOpenStreams(ctx)
		return err == nil && len(ids) == 0
	})
}

// A turn whose live message is recorded (a platform like Discord) and
// whose reply fails at first (an outage) keeps the record while the reply
// waits, and forgets it once the retried reply is posted: nothing is left
// for a restart to close as cut.
func TestLiveRecordForgottenAfterRetriedReply(t *testing.T) {
	plat := bridgetest.New(defaultLimits())
	cl := &closing{Platform: plat}
	k := key("T1")
	live := make(chan struct{})
	script := func(s *bridgetest.FakeSession, m streamjson.UserMessage) {
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleStarted})
		s.Emit(streamjson.Init{SessionID: s.Opts.SessionID})
		s.Emit(streamjson.TextDelta{Text: "the answer so far "})
		select {
		case <-live: // the live message is posted, and the outage begins
		case <-time.After(time.Minute):
		}
		text := "the answer so far and the rest"
		s.Emit(streamjson.TextDelta{Text: "and the rest"})
		s.Emit(streamjson.AssistantText{Text: text})
		s.Emit(streamjson.Result{Subtype: "success", Text: text, SessionID: s.Opts.SessionID, Duration: 20 * time.Millisecond, CostUSD: 0.001, NumTurns: 1})
		s.Emit(streamjson.Lifecycle{UUID: m.UUID, State: streamjson.LifecycleCompleted})
	}
	h := start(t, setup{platform: plat, wrap: func(*bridgetest.Platform) bridges.Platform { return cl }, script: script,
		outboxBackoff: 300 * time.Millisecond})
	h.send(k, "m1", "alice", "hello")
	plat.WaitFor(t, k, time.Minute, "the live message", func(m bridgetest.Msg) bool { return strings.Contains(m.Text, "the answer so far") })
	var outage atomic.Bool
	outage.Store(true)
	down := errors.New("platform unavailable")
	plat.FailPosts(func(bridges.ConversationKey, bridges.Message) error {
		if outage.Load() {
			return down
		}
		return nil
	})
	plat.FailEdits(func(bridges.MessageRef, bridges.Message) error {
		if outage.Load() {
			return down
		}
		return nil
	})
	close(live)
	ctx := ctxT(t)
	conv := h.conversation(k)
	open := func() bool {
		ids, err := h.st.ConversationsWithOpenStreams(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Contains(ids, conv.ID)
	}
	deadline := time.Now().Add(time.Minute)
	for ; ; time.Sleep(20 * time.Millisecond) { // the reply failed once: it waits for a retry
		if n, _ := h.st.PendingOutboxForConversation(ctx, conv.ID); len(n) > 0 && n[0].Attempts > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the reply never failed")
		}
	}
	if !open() {
		t.Error("the live message's record was dropped while its reply still waits")
	}
	outage.Store(false)
	h.waitText(k, "and the rest")
	for open() {
		if time.Now().After(deadline) {
			t.Fatal("the live message's record stays after its reply was posted: a restart would close it as cut")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := cl.closedIDs(); len(got) != 0 {
		t.Errorf("closed as cut: %v", got)
	}
}
