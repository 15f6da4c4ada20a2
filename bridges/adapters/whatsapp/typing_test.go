package whatsapp

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/internal/testkit"
)

// "composing…" is cleared by a message in the chat, so off after a post
// costs no call; off without a post sends "paused". On also sends the
// read receipts of the chat's accepted messages, which waited for it.
func TestTypingOffAfterAPostIsFree(t *testing.T) {
	// The core's own indicator stays off (status_delay far away), so that
	// only this test's calls make presences, however slow the turn.
	e := startFull(t, nil, func(c *config.Config) { c.StatusDelay = time.Hour })
	in := e.msg(pnJID(alice), pnJID(alice), "hello")
	e.dispatch(in)
	e.waitText(pnJID(alice), "pong: *hello*")
	key := bridges.ConversationKey{Bot: "phone", Channel: pnJID(alice).String()}
	presences := func() []string {
		var out []string
		for _, c := range e.fake.Calls() {
			if c.Op == "SendChatPresence" {
				out = append(out, c.State)
			}
		}
		return out
	}
	before := len(presences())
	if err := e.b.SetTyping(t.Context(), key, true); err != nil {
		t.Fatal(err)
	}
	if _, err := e.b.Post(t.Context(), key, bridges.Message{Text: "answer"}); err != nil {
		t.Fatal(err)
	}
	if err := e.b.SetTyping(t.Context(), key, false); err != nil {
		t.Fatal(err)
	}
	if err := e.b.SetTyping(t.Context(), key, true); err != nil {
		t.Fatal(err)
	}
	if err := e.b.SetTyping(t.Context(), key, false); err != nil {
		t.Fatal(err)
	}
	want := []string{string(types.ChatPresenceComposing), string(types.ChatPresenceComposing), string(types.ChatPresencePaused)}
	if got := presences()[before:]; !slices.Equal(got, want) {
		t.Errorf("presences = %v, want %v", got, want)
	}
}

// ownsAll is a Handler that owns every conversation: enough for SetTyping
// (nothing else of it is called here).
type ownsAll struct{ bridges.Handler }

func (ownsAll) Owns(context.Context, bridges.ConversationKey) (bool, error) { return true, nil }

// TestRunWaitsForTypingRefresh: the goroutine that repeats "composing"
// belongs to Run, which returns only once it has ended: a refresh stuck
// in a presence call when Run's context ends holds Run's return until the
// call returns, and no refresh starts after.
func TestRunWaitsForTypingRefresh(t *testing.T) {
	fake := newFakeClient(nil)
	stuck, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var calls atomic.Int32
	fake.presenceHook = func(types.ChatPresence) {
		if calls.Add(1) == 2 { // the first refresh, after SetTyping's own call
			once.Do(func() { close(stuck) })
			<-release
		}
	}
	b := New(Options{Bot: "phone", Client: fake, TypingRefresh: time.Millisecond, SendInterval: sendInterval})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx, ownsAll{}) }()
	testkit.WaitUntil(t, "a Connect", waitTimeout, func() bool { return slices.ContainsFunc(fake.Calls(), op("Connect")) })
	key := bridges.ConversationKey{Bot: "phone", Channel: pnJID(alice).String()}
	if err := b.SetTyping(ctx, key, true); err != nil {
		t.Fatal(err)
	}
	<-stuck
	cancel()
	select {
	case err := <-done:
		close(release)
		t.Fatalf("Run returned (%v) while its typing refresh was still running", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// answersAtOnce is a Handler whose core answers a message before
// HandleMessage returns (a notice such as "voice is not set up"), or
// fails to record it when refuse is set.
type answersAtOnce struct {
	ownsAll
	b      *Bridge
	refuse bool
}

func (answersAtOnce) Allowed(bridges.ConversationKey, string) bool { return true }

func (a answersAtOnce) HandleMessage(ctx context.Context, in bridges.Inbound) error {
	if a.refuse {
		return errors.New("store unavailable")
	}
	_, err := a.b.Post(ctx, in.Key, bridges.Message{Text: "answer to " + in.MsgID})
	return err
}

// TestReadReceiptBeforeAnAnswerGivenAtOnce: a message the core answers
// before HandleMessage returns is marked read before that answer (before,
// its receipt was noted after HandleMessage and waited for the next post);
// a message the core failed to record is never marked read.
func TestReadReceiptBeforeAnAnswerGivenAtOnce(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		fake := newFakeClient(nil)
		b := New(Options{Bot: "phone", Client: fake, TypingRefresh: time.Hour, SendInterval: sendInterval})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- b.Run(ctx, answersAtOnce{b: b, refuse: refuse}) }()
		testkit.WaitUntil(t, "a Connect", waitTimeout, func() bool { return slices.ContainsFunc(fake.Calls(), op("Connect")) })
		e := &env{t: t, fake: fake, b: b}
		in := e.msg(pnJID(alice), pnJID(alice), "hello")
		if fake.Dispatch(in) == refuse {
			t.Fatalf("refuse=%v: Dispatch accepted=%v", refuse, !refuse)
		}
		// A later post would send a receipt still waiting: none may be.
		if _, err := b.Post(t.Context(), bridges.ConversationKey{Bot: "phone", Channel: pnJID(alice).String()}, bridges.Message{Text: "later"}); err != nil {
			t.Fatal(err)
		}
		var ops []string
		for _, c := range fake.Calls() {
			if c.Op == "MarkRead" && slices.Contains(c.IDs, in.Info.ID) || c.Op == "SendMessage" {
				ops = append(ops, c.Op)
			}
		}
		want := []string{"MarkRead", "SendMessage", "SendMessage"}
		if refuse {
			want = []string{"SendMessage"}
		}
		if !slices.Equal(ops, want) {
			t.Errorf("refuse=%v: calls = %v, want %v", refuse, ops, want)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
	}
}
