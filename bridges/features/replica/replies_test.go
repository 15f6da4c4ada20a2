package replica

import (
	"context"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// TestForwardedClickAnsweredPrivately: a click received by a replica that
// does not hold its conversation is forwarded to the holder; what the
// holder answers privately is sent through the receiving replica's Reply,
// once.
func TestForwardedClickAnsweredPrivately(t *testing.T) {
	st := openPG(t)
	ctx := context.Background()
	conv, _, err := st.GetOrCreateConversation(ctx, store.ConversationKey{Bot: "b", Channel: "c", Thread: "t"}, "coder", "u")
	if err != nil {
		t.Fatal(err)
	}
	const lease = 5 * time.Second
	a, ca, _ := startReplica(t, st, lease)
	b, _, _ := startReplica(t, st, lease)
	if tn, err := a.Claim(ctx, conv.ID); err != nil || !tn.OK {
		t.Fatalf("claim = %+v, %v", tn, err)
	}
	replies := make(chan string, 10)
	b.Forward(ctx, conv.ID, &bridges.Action{Key: bridges.ConversationKey(conv.Key), CardID: "card", Choice: "allow", UserID: "mallory",
		Reply: func(_ context.Context, text string) error { replies <- text; return nil }})
	var got bridges.Action
	select {
	case got = <-ca.actions:
	case <-time.After(5 * time.Second):
		t.Fatal("forwarded click not handled by the holder")
	}
	if got.Reply == nil {
		t.Fatal("the forwarded click has no Reply at the holder")
	}
	if err := got.Reply(ctx, "Sorry, only @u, approvers or admins can answer this request."); err != nil {
		t.Fatal(err)
	}
	select {
	case text := <-replies:
		if text != "Sorry, only @u, approvers or admins can answer this request." {
			t.Errorf("private answer = %q", text)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the private answer did not reach the receiving replica's Reply")
	}
	select {
	case text := <-replies:
		t.Errorf("answered twice: %q", text)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestKeptRepliesExpire: a kept Reply is not used after replyTTL, and the
// poll forgets it.
func TestKeptRepliesExpire(t *testing.T) {
	var rs replies
	now := time.Now()
	token := rs.keep(func(context.Context, string) error { return nil }, now)
	if rs.get(token, now.Add(replyTTL-time.Second)) == nil {
		t.Fatal("a fresh reply is gone")
	}
	if rs.get(token, now.Add(replyTTL+time.Second)) != nil {
		t.Error("an expired reply is still used")
	}
	rs.prune(now.Add(replyTTL + time.Second))
	if len(rs.byID) != 0 {
		t.Errorf("%d replies kept after pruning", len(rs.byID))
	}
	if rs.get("unknown", now) != nil {
		t.Error("an unknown token has a reply")
	}
}
