package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/agent/fakemodel"
	"github.com/agentbridge/agentbridge/store"
)

// TestSlackReplicasPausedHolderFenced: the replica running a conversation
// is frozen (SIGSTOP) in the middle of a turn, past its lease (3 s); the
// other replica takes the conversation over, delivers the interrupted
// message again and answers it. Then the frozen replica runs again
// (SIGCONT), with its agent's finished turn waiting in the pipe: it must
// change nothing — no post, edit or stream call on Slack, no reply
// recorded or posted, the ledger, usage and conversation as the new holder
// left them — and stop the conversation. About 15 s (40 s on a loaded
// machine).
func TestSlackReplicasPausedHolderFenced(t *testing.T) {
	t.Parallel()
	const lease = 3 * time.Second
	e := startReplicas(t, 2, lease)
	thread := e.slack.Mention(slackChan, alice, "hello", "")
	e.waitAnswer(t, thread, "pong: hello")

	var victim, other *bridgeProc
	var convID string
	for i, p := range e.procs {
		if _, held := e.held(t, p); len(held) == 1 {
			victim, other, convID = p, e.procs[1-i], held[0]
		}
	}
	if victim == nil {
		t.Fatal("no replica holds the conversation")
	}
	const slow = "[slow 30] [slowms 100] mid-turn"
	e.slack.SendMessage(slackChan, alice, slow, thread)
	if _, err := e.model.WaitForRequest(ctxTimeout(t, e2eWait), func(r fakemodel.Request) bool {
		return strings.Contains(fakemodel.LastUserText(r), "mid-turn")
	}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(victim.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			_ = syscall.Kill(victim.cmd.Process.Pid, syscall.SIGCONT)
		}
	}
	t.Cleanup(resume) // the harness stops it with SIGTERM

	// The other replica takes over, delivers the message again, answers.
	e.waitAnswer(t, thread, slow) // after the note that the turn was interrupted
	t.Logf("the new holder answered %s after the pause", time.Since(paused).Round(10*time.Millisecond))
	st, err := store.OpenPostgres(context.Background(), e.dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := e.slack.WaitFor(func() bool { return settled(t, st, convID) }, e2eWait); err != nil {
		t.Fatalf("the new holder never finished: %v", err)
	}
	otherID, _ := e.held(t, other)
	time.Sleep(time.Second) // the new holder's last calls (thread status)
	before := snapshotConversation(t, st, convID)
	callsBefore := len(slackWrites(e))

	resume()
	if !victim.waitLog(ctxTimeout(t, 20*time.Second), "lost its lease") &&
		!victim.waitLog(ctxTimeout(t, time.Second), "conversation lease lost") {
		t.Errorf("the resumed replica never noticed it lost the conversation\nlogs:\n%s", victim.logs)
	}
	time.Sleep(3 * time.Second) // whatever it would still do, it does by now
	for _, line := range strings.Split(victim.logs.String(), "\n") {
		if strings.Contains(line, "lease") && strings.Contains(line, convID) || strings.Contains(line, "lost its lease") {
			t.Logf("resumed replica: %s", line)
		}
	}

	if writes := slackWrites(e); len(writes) != callsBefore {
		t.Errorf("after SIGCONT the paused replica made %d Slack calls, want none: %+v\nposts: %s",
			len(writes)-callsBefore, writes[callsBefore:], e.dump())
	}
	if n := e.postsWith(thread, slow); n != 1 {
		t.Errorf("the interrupted message was answered %d times, want once\nposts: %s", n, e.dump())
	}
	if after := snapshotConversation(t, st, convID); after != before {
		t.Errorf("the paused replica changed the conversation:\nbefore %s\nafter  %s", before, after)
	}
	ls, err := st.Leases(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if l.Resource == "conversation:"+convID && l.Owner != otherID {
			t.Errorf("lease %+v, want it still the new holder's (%s)", l, otherID)
		}
	}
	if _, held := e.held(t, victim); slices.Contains(held, convID) {
		t.Errorf("the resumed replica still holds the conversation: %v", held)
	}
}

// settled reports whether conversation id has no message unfinished and
// no reply unposted.
func settled(t *testing.T, st *store.Store, id string) bool {
	t.Helper()
	msgs, err := st.UndeliveredInbox(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	replies, err := st.PendingOutboxForConversation(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return len(msgs) == 0 && len(replies) == 0
}

// snapshotConversation is what the store says of conversation id: its
// row, usage, open cards, unfinished messages and unposted replies.
func snapshotConversation(t *testing.T, st *store.Store, id string) string {
	t.Helper()
	ctx := context.Background()
	conv, err := st.ConversationByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	usage, err := st.UsageTotals(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	cards, err := st.ApprovalsForConversation(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := st.UndeliveredInbox(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	replies, err := st.PendingOutboxForConversation(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("conversation %+v usage %+v cards %d undelivered %d unposted %d", conv, usage, len(cards), len(msgs), len(replies))
}

// slackWrites are the calls to Slack that change what a thread shows.
func slackWrites(e *replicaEnv) []string {
	var out []string
	for _, c := range e.slack.Calls() {
		if strings.HasPrefix(c.Method, "chat.") || strings.HasPrefix(c.Method, "reactions.") || strings.HasPrefix(c.Method, "assistant.") {
			out = append(out, c.Method+" "+c.Params.Get("ts")+c.Params.Get("thread_ts"))
		}
	}
	return out
}
