package discord

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/discord/discordfake"
)

// TestThreadStartWaitsOutOutage: while Discord answers a mention's thread
// start with a transient error (5xx), the adapter retries like any post
// and hands the message to the core only once the thread exists: the
// conversation lives in its thread, never in the channel.
func TestThreadStartWaitsOutOutage(t *testing.T) {
	t.Parallel()
	for _, status := range []int{503, 500} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			t.Parallel()
			f := discordfake.New(t)
			r := startReady(t, f)
			f.FailThreadStart(-1, status, 0, "upstream connect error")
			id := f.SendMessage("100", guild, "u1", "a question during the outage", true)
			if err := f.Wait(wait, func() bool { return f.RequestCount(discordfake.RouteStartThread) >= 3 }); err != nil {
				t.Fatalf("the thread start was not retried: %d attempts", f.RequestCount(discordfake.RouteStartThread))
			}
			if n := countIDs(r.rec.messages())[id]; n != 0 {
				t.Fatalf("the message reached the core before its thread existed (%d times)", n)
			}
			f.FailThreadStart(0, 0, 0, "")
			got := r.rec.waitMsg(t, id)
			if want := (bridges.ConversationKey{Bot: botName, Channel: "100", Thread: id}); got.Key != want {
				t.Errorf("key = %+v, want the thread %+v", got.Key, want)
			}
			if th := f.Threads(); len(th) != 1 || th[0].MessageID != id {
				t.Errorf("threads = %+v, want one on the message", th)
			}
		})
	}
}

// TestThreadStartPermissionAnswersInChannel: a bot without Create Public
// Threads (403, code 50013) has the conversation in the channel at once,
// and an answer posted there replies to the message it answers; in a
// thread, answers are plain messages.
func TestThreadStartPermissionAnswersInChannel(t *testing.T) {
	t.Parallel()
	f := discordfake.NewWithOptions(t, discordfake.Options{
		Permissions: discordfake.DefaultPermissions &^ discordfake.PermissionCreatePublicThreads,
	})
	r := startReady(t, f)
	id := f.SendMessage("100", guild, "u1", "a question without threads", true)
	got := r.rec.waitMsg(t, id)
	if want := (bridges.ConversationKey{Bot: botName, Channel: "100"}); got.Key != want {
		t.Fatalf("key = %+v, want the channel %+v", got.Key, want)
	}
	if n := f.RequestCount(discordfake.RouteStartThread); n != 1 {
		t.Errorf("%d thread starts, want 1 (a permission answer is not retried)", n)
	}
	ctx := context.Background()
	ref, err := r.Post(ctx, got.Key, bridges.Message{Text: "the answer", ReplyTo: id, Idem: "reply-1"})
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := f.Message(ref.ID); !ok || m.ReplyTo != id {
		t.Errorf("the answer in the channel replies to %q, want the question %s", m.ReplyTo, id)
	}
	// A Components V2 answer (longer than 2,000 characters) too.
	long := make([]byte, 2500)
	for i := range long {
		long[i] = 'x'
	}
	ref, err = r.Post(ctx, got.Key, bridges.Message{Text: string(long), ReplyTo: id})
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := f.Message(ref.ID); !ok || !m.V2 || m.ReplyTo != id {
		t.Errorf("the long answer (V2 %v) replies to %q, want %s", m.V2, m.ReplyTo, id)
	}

	// In a thread nothing needs the reference.
	f.SetPermissions(discordfake.DefaultPermissions)
	id2 := f.SendMessage("100", guild, "u1", "a question in a thread", true)
	in := r.rec.waitMsg(t, id2)
	if in.Key.Thread == "" {
		t.Fatalf("no thread once the bot may start one: %+v", in.Key)
	}
	ref, err = r.Post(ctx, in.Key, bridges.Message{Text: "the answer", ReplyTo: id2})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := f.Message(ref.ID); m.ReplyTo != "" {
		t.Errorf("an answer in its thread replies to %q, want a plain message", m.ReplyTo)
	}
}
