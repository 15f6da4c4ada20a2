package store

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
)

// BenchmarkEnqueue measures one durable ledger insert (a committed BEGIN
// IMMEDIATE transaction in WAL mode; on PostgreSQL a committed transaction)
// per inbound message, on each driver.
func BenchmarkEnqueue(b *testing.B) {
	eachStoreB(b, benchEnqueue)
}

func benchEnqueue(b *testing.B, s *Store) {
	ctx := context.Background()
	conv := newConv(b, s, "bot", "C", "T")
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
	eachStoreB(b, benchEnqueueParallel)
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
// the ledger entry (Enqueue), sent and started, the activity and summary
// (NoteActivity), the turn's usage and reply (EndTurn), the reply posted
// and the message completed — seven committed writes, on each driver.
func BenchmarkMessageLifecycle(b *testing.B) {
	eachStoreB(b, func(b *testing.B, s *Store) {
		ctx := context.Background()
		conv := newConv(b, s, "bot", "C", "T")
		i := 0
		for b.Loop() {
			i++
			m, _, err := s.Enqueue(ctx, InboxMessage{ConversationID: conv.ID, PlatformMsgID: strconv.Itoa(i), UserID: "U1", Text: "hello"})
			if err == nil {
				err = s.MarkInbox(ctx, m.ID, InboxSent, "")
			}
			if err == nil {
				err = s.MarkInbox(ctx, m.ID, InboxStarted, "")
			}
			if err == nil {
				err = s.NoteActivity(ctx, conv.ID, m.Text)
			}
			var replies []OutboxMessage
			if err == nil {
				replies, err = s.EndTurn(ctx, Usage{ConversationID: conv.ID, SessionID: "s", UserID: "U1", CostUSD: 0.01},
					[]OutboxMessage{{ConversationID: conv.ID, Text: "pong: hello"}})
			}
			if err == nil {
				err = s.MarkOutboxPosted(ctx, replies[0].ID)
			}
			if err == nil {
				err = s.MarkInbox(ctx, m.ID, InboxCompleted, "")
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
