package storetest

import (
	"context"
	"testing"
)

// The rows many store tests start from. The helpers are generic over the
// store's types because this kit cannot import convstore, whose own tests
// use it.

// Conversations is the method of convstore's store (and of what embeds
// it) that NewConv calls.
type Conversations[K, C any] interface {
	GetOrCreateConversation(ctx context.Context, key K, agent, owner string) (C, bool, error)
}

// NewConv gets or creates the conversation of key, with profile "coder"
// and owner "U1", failing t on an error.
func NewConv[K, C any](t testing.TB, s Conversations[K, C], key K) C {
	t.Helper()
	c, _, err := s.GetOrCreateConversation(context.Background(), key, "coder", "U1")
	if err != nil {
		t.Fatalf("GetOrCreateConversation: %v", err)
	}
	return c
}

// NewConvAt is NewConv for the conversation bot/channel/thread, for any
// key type shaped like convstore.ConversationKey.
func NewConvAt[K ~struct{ Bot, Channel, Thread string }, C any](t testing.TB, s Conversations[K, C], bot, channel, thread string) C {
	t.Helper()
	return NewConv(t, s, K{Bot: bot, Channel: channel, Thread: thread})
}

// Inbox is the method of convstore's store (and of what embeds it) that
// Enqueue calls.
type Inbox[M any] interface {
	Enqueue(ctx context.Context, m M) (M, bool, error)
}

// Enqueue stores m in the inbox, failing t on an error or when m (by its
// platform message id, msgID in messages) is a duplicate.
func Enqueue[M any](t testing.TB, s Inbox[M], m M, msgID string) M {
	t.Helper()
	got, dup, err := s.Enqueue(context.Background(), m)
	if err != nil {
		t.Fatalf("Enqueue %s: %v", msgID, err)
	}
	if dup {
		t.Fatalf("Enqueue %s: unexpected duplicate", msgID)
	}
	return got
}
