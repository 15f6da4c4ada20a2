package screen_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/live"
	"github.com/agentbridge/agentbridge/bridges/core/screen"
	"github.com/agentbridge/agentbridge/bridges/kits/bridgetest"
	"github.com/agentbridge/agentbridge/store"
)

// worker is a screen.Worker whose tenure the test ends.
type worker struct {
	lost   bool
	backs  int
	fenced int
}

func (w *worker) MayPost() bool { return !w.lost }
func (w *worker) PlatformBack() { w.backs++ }
func (w *worker) Fenced(err error) bool {
	if errors.Is(err, store.ErrFenced) {
		w.fenced++
		return true
	}
	return false
}

// closer is the fake platform that closes cut messages (Discord's way).
type closer struct {
	*bridgetest.Platform
	mu     sync.Mutex
	closed []string
}

func (c *closer) CloseStream(ctx context.Context, ref bridges.MessageRef, note string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = append(c.closed, ref.ID+note)
	return nil
}

type fixture struct {
	w     *worker
	p     *bridgetest.Platform
	now   time.Time
	st    *store.Store
	id    string
	key   bridges.ConversationKey
	limit bridges.Limits
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{w: &worker{}, now: time.Unix(1_700_000_000, 0),
		limit: bridges.Limits{EditInterval: time.Second, MaxMessageRunes: 1000}}
	f.p = bridgetest.New(f.limit)
	f.p.SetClock(func() time.Time { return f.now })
	f.st = bridgetest.OpenStore(t)
	f.key = bridges.ConversationKey{Bot: "b", Channel: "C1", Thread: "T1"}
	conv, _, err := f.st.GetOrCreateConversation(context.Background(), store.ConversationKey(f.key), "coder", "U1")
	if err != nil {
		t.Fatal(err)
	}
	f.id = conv.ID
	return f
}

func (f *fixture) screen(p bridges.Platform) *screen.Screen {
	return screen.New(screen.Config{Worker: f.w, Platform: p, Key: f.key, ID: f.id, Limits: f.limit,
		Budget: &delivery.Budget{}, Store: f.st, Now: func() time.Time { return f.now }, Log: slog.New(slog.DiscardHandler)})
}

// TestLiveMessageWaitsForItsIntervals: a turn's first live post waits one
// edit interval from its start; the next edit waits for the channel's
// budget (one call per interval) and is made once it is due.
func TestLiveMessageWaitsForItsIntervals(t *testing.T) {
	f := newFixture(t)
	s := f.screen(f.p)
	tr := live.NewTurn(f.now)
	tr.AddText("hello")
	if w := s.FirstWait(tr); w != time.Second {
		t.Fatalf("first wait %s, want the edit interval 1s", w)
	}
	f.now = f.now.Add(time.Second)
	if w := s.FirstWait(tr); w != 0 {
		t.Fatalf("first wait after the interval %s, want 0", w)
	}
	tr.Live.Dirty = true
	if w := s.Flush(context.Background(), tr); w != 0 {
		t.Fatalf("the first flush waits %s", w)
	}
	if !tr.Live.Posted || len(f.p.Messages(f.key)) != 1 {
		t.Fatalf("the live message was not posted: %s", f.p.Dump())
	}
	tr.AddText("world")
	tr.Live.Dirty = true
	w := s.Flush(context.Background(), tr)
	if w <= 0 {
		t.Fatal("an edit right after the post did not wait for the budget")
	}
	if _, edits := f.p.Count(); edits != 0 {
		t.Fatalf("%d edits before the budget allowed one", edits)
	}
	f.now = f.now.Add(w)
	if w := s.Flush(context.Background(), tr); w != 0 {
		t.Fatalf("the due flush waits %s", w)
	}
	if msgs := f.p.Messages(f.key); len(msgs) != 1 || msgs[0].Text != "hello\n\nworld …" {
		t.Fatalf("the live message shows %+v, want the edited text", msgs)
	}
	if f.w.backs != 2 {
		t.Errorf("the worker was told of %d answers, want 2", f.w.backs)
	}
}

// TestNothingShownAfterTheTenure: once the worker may not post, nothing
// reaches the platform and posts fail with ErrTenureOver.
func TestNothingShownAfterTheTenure(t *testing.T) {
	f := newFixture(t)
	s := f.screen(f.p)
	f.w.lost = true
	if _, err := s.Post(context.Background(), bridges.Message{Text: "x"}); !errors.Is(err, screen.ErrTenureOver) {
		t.Errorf("Post after the tenure: %v, want ErrTenureOver", err)
	}
	if err := s.PostNotice(context.Background(), "x"); !errors.Is(err, screen.ErrTenureOver) {
		t.Errorf("PostNotice after the tenure: %v, want ErrTenureOver", err)
	}
	s.ShowStatus(context.Background())
	if posts, edits := f.p.Count(); posts+edits != 0 || f.p.Typing(f.key) {
		t.Errorf("the platform was called after the tenure: %s", f.p.Dump())
	}
}

// TestCutStreamClosedOrHandedToTheOutbox: a live message a cut turn left
// open is closed with CutNote and its record dropped; one that was being
// edited into a reply is not closed but handed back for the outbox to make
// that edit; the worker's own stream is left alone.
func TestCutStreamClosedOrHandedToTheOutbox(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	c := &closer{Platform: f.p}
	s := f.screen(c)

	put := func(msg, reply string) {
		t.Helper()
		if err := f.st.PutOpenStream(ctx, store.OpenStream{ConversationID: f.id, Channel: f.key.Channel, Thread: f.key.Thread, MessageID: msg, ReplyID: reply}); err != nil {
			t.Fatal(err)
		}
	}
	put("m1", "")
	if reply, _ := s.CloseCutStream(ctx); reply != "" {
		t.Fatalf("a plain cut stream was handed to the outbox as reply %q", reply)
	}
	if len(c.closed) != 1 || c.closed[0] != "m1"+screen.CutNote {
		t.Fatalf("closed %q, want m1 with the cut note", c.closed)
	}
	if _, err := f.st.OpenStreamOf(ctx, f.id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the closed stream is still recorded: %v", err)
	}

	put("m2", "reply-1")
	reply, into := s.CloseCutStream(ctx)
	if reply != "reply-1" || into.ID != "m2" || into.Key != f.key {
		t.Fatalf("CloseCutStream = %q %+v, want reply-1 into m2 of %v", reply, into, f.key)
	}
	if len(c.closed) != 1 {
		t.Fatalf("a message becoming a reply was closed: %q", c.closed)
	}
	// It is now this worker's own: not closed again, and forgotten once
	// the reply is shown (not while the outbox retries).
	if reply, _ := s.CloseCutStream(ctx); reply != "" || len(c.closed) != 1 {
		t.Fatalf("the worker's own stream was handled again: %q %q", reply, c.closed)
	}
	s.ForgetStream(ctx, true)
	if _, err := f.st.OpenStreamOf(ctx, f.id); err != nil {
		t.Fatalf("the record was dropped while the outbox retries: %v", err)
	}
	s.ForgetStream(ctx, false)
	if _, err := f.st.OpenStreamOf(ctx, f.id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the record was kept after the reply: %v", err)
	}
}

// TestWorkingIndicatorWaitsForTheDelay: the indicator waits status_delay,
// except where it is free; it is shown once and cleared.
func TestWorkingIndicatorWaitsForTheDelay(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	s := f.screen(f.p)
	if w, ok := s.StatusWait(3 * time.Second); !ok || w != 3*time.Second {
		t.Fatalf("StatusWait = %s %v, want 3s", w, ok)
	}
	s.ShowStatus(ctx)
	if !f.p.Typing(f.key) {
		t.Fatal("the indicator is not shown")
	}
	if _, ok := s.StatusWait(3 * time.Second); ok {
		t.Error("a shown indicator is armed again")
	}
	s.ClearStatus(ctx)
	if f.p.Typing(f.key) {
		t.Fatal("the indicator is not cleared")
	}
	f.limit.FreeTyping = true
	if w, ok := f.screen(f.p).StatusWait(3 * time.Second); !ok || w != 0 {
		t.Errorf("free typing waits %s %v, want at once", w, ok)
	}
}
