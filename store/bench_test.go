package store

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store/internal/storetest"
)

// BenchmarkEnqueue measures one durable ledger insert (a committed BEGIN
// IMMEDIATE transaction in WAL mode; on PostgreSQL a committed transaction)
// per inbound message, on each driver.
func BenchmarkEnqueue(b *testing.B) {
	kit.EachB(b, benchEnqueue)
}

func benchEnqueue(b *testing.B, s *Store) {
	ctx := context.Background()
	conv := storetest.NewConvAt(b, s, "bot", "C", "T")
	i := 0
	for b.Loop() {
		i++
		if _, _, err := s.Enqueue(ctx, InboxMessage{ConversationID: conv.ID, PlatformMsgID: strconv.Itoa(i), Text: "hello"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnqueueParallel measures ledger inserts from concurrent
// conversations competing for the store's single writer connection.
func BenchmarkEnqueueParallel(b *testing.B) {
	kit.EachB(b, benchEnqueueParallel)
}

func benchEnqueueParallel(b *testing.B, s *Store) {
	ctx := context.Background()
	var n atomic.Int64
	b.ResetTimer() // not the store's opening (a new database for postgres)
	b.RunParallel(func(pb *testing.PB) {
		key := ConversationKey{Bot: "bot", Channel: "C", Thread: strconv.FormatInt(n.Add(1), 10)}
		conv, _, err := s.GetOrCreateConversation(ctx, key, "coder", "U1")
		if err != nil {
			b.Error(err) // not Fatal: this is not the benchmark goroutine
			return
		}
		for pb.Next() {
			id := "p" + strconv.FormatInt(n.Add(1), 10)
			if _, _, err := s.Enqueue(ctx, InboxMessage{ConversationID: conv.ID, PlatformMsgID: id, Text: "hello"}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkMessageLifecycle measures the store's share of one message
// answered in an existing conversation: what the core writes for it —
// the ledger entry (Enqueue), sent with the activity and summary
// (MarkSent), the turn's usage and reply with the message completed
// (EndTurn), the reply posted — four committed writes, on each driver
// (seven before they were merged: sub-benchmark "separate"; "fenced" is
// "merged" with the worker's three writes fenced by the conversation's
// lease, as with replicas). cpu-µs/op is the process's user+system CPU
// per message.
func BenchmarkMessageLifecycle(b *testing.B) {
	kit.EachB(b, func(b *testing.B, s *Store) {
		b.Run("merged", func(b *testing.B) { benchLifecycle(b, s, true, false) })
		b.Run("separate", func(b *testing.B) { benchLifecycle(b, s, false, false) })
		b.Run("fenced", func(b *testing.B) { benchLifecycle(b, s, true, true) })
	})
}

func benchLifecycle(b *testing.B, s *Store, merged, fenced bool) {
	ctx := context.Background()
	conv := storetest.NewConvAt(b, s, "bot", "C", strconv.FormatInt(time.Now().UnixNano(), 10)) // a run of its own
	// The worker's writes: fenced by the conversation's lease, or not.
	ws := s
	if fenced {
		l, err := s.AcquireLease(ctx, "conversation:"+conv.ID, "bench", time.Hour)
		if err != nil {
			b.Fatal(err)
		}
		ws = s.Fenced(l)
	}
	cpu0 := testkit.ProcessCPU(b)
	i := 0
	for b.Loop() {
		i++
		m, _, err := s.Enqueue(ctx, InboxMessage{ConversationID: conv.ID, PlatformMsgID: conv.ID + strconv.Itoa(i), UserID: "U1", Text: "hello"})
		usage := Usage{ConversationID: conv.ID, SessionID: "s", UserID: "U1", CostUSD: 0.01}
		reply := []OutboxMessage{{ConversationID: conv.ID, Text: "pong: hello"}}
		var replies []OutboxMessage
		switch {
		case err != nil:
		case merged:
			if err = ws.MarkSent(ctx, m.ID, m.Text); err == nil {
				replies, err = ws.EndTurn(ctx, usage, reply, InboxMark{ID: m.ID, State: InboxCompleted})
			}
		default:
			for _, st := range []InboxState{InboxSent, InboxStarted} {
				if err == nil {
					err = s.MarkInbox(ctx, m.ID, st, "")
				}
			}
			if err == nil {
				err = s.NoteActivity(ctx, conv.ID, m.Text)
			}
			if err == nil {
				replies, err = s.EndTurn(ctx, usage, reply)
			}
		}
		if err == nil {
			err = ws.MarkOutboxPosted(ctx, replies[0].ID)
		}
		if err == nil && !merged {
			err = s.MarkInbox(ctx, m.ID, InboxCompleted, "")
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((testkit.ProcessCPU(b)-cpu0).Microseconds())/float64(i), "cpu-µs/op")
}
