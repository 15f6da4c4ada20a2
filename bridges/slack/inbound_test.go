package slack

import (
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/slack/slackfake"
)

// A channel mention starts a conversation keyed by the mention's ts; the
// envelope is acked only after HandleMessage returned; the app_mention
// twin of the message event is acked without a second delivery.
func TestMentionStartsThreadAndAcksAfterAccept(t *testing.T) {
	for _, mentionFirst := range []bool{false, true} {
		name := "message first"
		if mentionFirst {
			name = "app_mention first"
		}
		t.Run(name, func(t *testing.T) {
			e := start(t, slackfake.WithoutEcho())
			e.fake.AddUser(slackfake.User{ID: "U1", Name: "ann", DisplayName: "Ann"})
			gate := make(chan struct{})
			e.h.mu.Lock()
			e.h.gate = gate
			e.h.mu.Unlock()

			sent := e.fake.Send(slackfake.Msg{
				Channel: "C1", User: "U1", MentionFirst: mentionFirst,
				Text: "<@" + slackfake.BotUserID + "> fix &lt;this&gt; &amp; <https://example.com|that>",
			})
			if len(sent.Envelopes) != 2 {
				t.Fatalf("fake sent %d envelopes, want message + app_mention", len(sent.Envelopes))
			}
			// While the core has not accepted the message, nothing is acked.
			waitUntil(t, waitLong, "handler called", func() bool {
				e.h.mu.Lock()
				defer e.h.mu.Unlock()
				return e.h.calls > 0
			})
			time.Sleep(300 * time.Millisecond)
			for _, id := range sent.Envelopes {
				if en, _ := e.fake.Envelope(id); en.Acked {
					t.Fatalf("envelope %s acked before HandleMessage returned", id)
				}
			}
			close(gate)
			e.waitAcked(t, sent.TS)

			msgs := e.h.messages()
			if len(msgs) != 1 {
				t.Fatalf("HandleMessage accepted %d messages, want 1: %+v", len(msgs), msgs)
			}
			m := msgs[0]
			wantKey := bridges.ConversationKey{Bot: "team", Channel: "C1", Thread: sent.TS}
			if m.Key != wantKey {
				t.Errorf("key = %v, want %v", m.Key, wantKey)
			}
			if want := "fix <this> & [that](https://example.com)"; m.Text != want {
				t.Errorf("text = %q, want %q", m.Text, want)
			}
			if m.UserID != "U1" || m.UserName != "Ann" || m.MsgID != "C1:"+sent.TS || m.At.IsZero() {
				t.Errorf("inbound = %+v", m)
			}
			e.h.mu.Lock()
			returned := e.h.returned[0]
			e.h.mu.Unlock()
			for _, id := range sent.Envelopes {
				en, _ := e.fake.Envelope(id)
				if en.AckedAt.Before(returned) {
					t.Errorf("envelope %s acked at %v, before HandleMessage returned at %v", id, en.AckedAt, returned)
				}
			}
		})
	}
}

// Slack resends an envelope it thinks was not acked: it is acked again
// but reaches the core once.
func TestRetryOfSameEnvelopeHandledOnce(t *testing.T) {
	e := start(t)
	sent := e.fake.Send(slackfake.Msg{Channel: "D1", User: "U1", Text: "hello"})
	e.waitAcked(t, sent.TS)
	retry := e.fake.Resend(sent.Envelopes[0])
	if _, err := e.fake.WaitForAck(retry, waitLong); err != nil {
		t.Fatal(err)
	}
	if en, _ := e.fake.Envelope(retry); en.Retry != 1 {
		t.Errorf("retry envelope has retry_attempt %d, want 1", en.Retry)
	}
	if got := len(e.h.messagesFor(sent.TS)); got != 1 {
		t.Errorf("message delivered %d times, want 1", got)
	}
}

// When the core fails to accept a message the envelope is not acked, so
// Slack's retry delivers it again.
func TestHandlerErrorLeavesEnvelopeUnacked(t *testing.T) {
	e := start(t)
	e.h.mu.Lock()
	e.h.failNext = 1
	e.h.mu.Unlock()
	sent := e.fake.Send(slackfake.Msg{Channel: "D1", User: "U1", Text: "hello"})
	waitUntil(t, waitLong, "first attempt", func() bool {
		e.h.mu.Lock()
		defer e.h.mu.Unlock()
		return e.h.calls == 1
	})
	retry := e.fake.Resend(sent.Envelopes[0])
	if _, err := e.fake.WaitForAck(retry, waitLong); err != nil {
		t.Fatal(err)
	}
	// Envelopes are handled and acked in order: the retry's ack is there,
	// so an ack of the first attempt would be too.
	if en, _ := e.fake.Envelope(sent.Envelopes[0]); en.Acked {
		t.Fatal("envelope acked although HandleMessage failed")
	}
	if got := len(e.h.messagesFor(sent.TS)); got != 1 {
		t.Errorf("message accepted %d times, want 1", got)
	}
}

func TestRouting(t *testing.T) {
	e := start(t)
	mention := e.fake.Mention("C1", "U1", "start", "")
	e.waitAcked(t, mention)
	owned := bridges.ConversationKey{Bot: "team", Channel: "C1", Thread: mention}

	tests := []struct {
		name    string
		msg     slackfake.Msg
		wantKey *bridges.ConversationKey // nil: not delivered
		want    string
	}{
		{name: "follow-up in owned thread without mention", msg: slackfake.Msg{Channel: "C1", User: "U2", Text: "more", ThreadTS: mention}, wantKey: &owned, want: "more"},
		{name: "thread_broadcast in owned thread", msg: slackfake.Msg{Channel: "C1", User: "U2", Text: "also to channel", ThreadTS: mention, Subtype: "thread_broadcast"}, wantKey: &owned, want: "also to channel"},
		{name: "other thread without mention", msg: slackfake.Msg{Channel: "C1", User: "U2", Text: "not for the bot", ThreadTS: "1.000001"}},
		{name: "mention inside another thread adopts it", msg: slackfake.Msg{Channel: "C1", User: "U2", Text: "<@" + slackfake.BotUserID + "> help here", ThreadTS: "1.000002"},
			wantKey: &bridges.ConversationKey{Bot: "team", Channel: "C1", Thread: "1.000002"}, want: "help here"},
		{name: "top-level chatter", msg: slackfake.Msg{Channel: "C1", User: "U2", Text: "lunch?"}},
		{name: "other bot in owned thread", msg: slackfake.Msg{Channel: "C1", User: "U9", BotID: "B9", Text: "beep", ThreadTS: mention}},
		{name: "bot_message subtype", msg: slackfake.Msg{Channel: "C1", User: "U9", Subtype: "bot_message", Text: "beep", ThreadTS: mention}},
		{name: "own message", msg: slackfake.Msg{Channel: "C1", User: slackfake.BotUserID, Text: "echo", ThreadTS: mention}},
		{name: "edit", msg: slackfake.Msg{Channel: "C1", User: "U2", Subtype: "message_changed", Text: "edited", ThreadTS: mention}},
		{name: "delete", msg: slackfake.Msg{Channel: "C1", User: "U2", Subtype: "message_deleted", ThreadTS: mention}},
		{name: "channel join", msg: slackfake.Msg{Channel: "C1", User: "U2", Subtype: "channel_join", Text: "<@U2> has joined"}},
		{name: "DM top level shares one conversation", msg: slackfake.Msg{Channel: "D1", User: "U1", Text: "hi"},
			wantKey: &bridges.ConversationKey{Bot: "team", Channel: "D1"}, want: "hi"},
		{name: "DM thread is its own conversation", msg: slackfake.Msg{Channel: "D1", User: "U1", Text: "in thread", ThreadTS: "2.000001"},
			wantKey: &bridges.ConversationKey{Bot: "team", Channel: "D1", Thread: "2.000001"}, want: "in thread"},
		{name: "group DM needs a mention", msg: slackfake.Msg{Channel: "G1", User: "U1", Text: "hello all"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sent := e.fake.Send(tt.msg)
			e.waitAcked(t, sent.TS)
			got := e.h.messagesFor(sent.TS)
			if tt.wantKey == nil {
				if len(got) != 0 {
					t.Fatalf("delivered %+v, want nothing", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("delivered %d times, want once", len(got))
			}
			if got[0].Key != *tt.wantKey || got[0].Text != tt.want {
				t.Errorf("got key %v text %q, want %v %q", got[0].Key, got[0].Text, *tt.wantKey, tt.want)
			}
		})
	}
}

// The bot's own posts come back as events (the fake echoes them like
// Slack) and must not reach the core.
func TestOwnPostsIgnored(t *testing.T) {
	e := start(t) // echo on
	ts := e.fake.Mention("C1", "U1", "go", "")
	e.waitAcked(t, ts)
	key := bridges.ConversationKey{Bot: "team", Channel: "C1", Thread: ts}
	ref, err := e.b.Post(t.Context(), key, bridges.Message{Text: "working on it"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.b.Edit(t.Context(), ref, bridges.Message{Text: "done"}); err != nil {
		t.Fatal(err)
	}
	e.waitAcked(t, ref.ID) // the echo of the post
	waitUntil(t, waitLong, "all envelopes acked", func() bool {
		for _, en := range e.fake.Envelopes() {
			if !en.Acked {
				return false
			}
		}
		return len(e.fake.Envelopes()) >= 4 // message, app_mention, post echo, edit echo
	})
	if got := len(e.h.messages()); got != 1 {
		t.Errorf("core got %d messages, want only the user's one", got)
	}
}

func TestTSTime(t *testing.T) {
	got := tsTime("1700000000.000123")
	if want := time.Unix(1700000000, 123000); !got.Equal(want) {
		t.Errorf("tsTime = %v, want %v", got, want)
	}
	if !tsTime("garbage").IsZero() {
		t.Error("bad ts should give the zero time")
	}
}
