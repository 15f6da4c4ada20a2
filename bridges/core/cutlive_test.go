package core_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/bridgetest"
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
