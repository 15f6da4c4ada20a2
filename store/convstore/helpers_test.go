package convstore

import (
	"context"
	"os"
	"testing"

	"github.com/google/uuid"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
)

// kit runs every test on SQLite and PostgreSQL, each on a fresh Store
// (storetest).
var kit = storetest.Kit[*Store]{New: New}

func TestMain(m *testing.M) { os.Exit(kit.Run(m)) }

// enqueue stores a message with platform id msgID in conv.
func enqueue(t testing.TB, s *Store, conv Conversation, msgID string) InboxMessage {
	return storetest.Enqueue(t, s, InboxMessage{ConversationID: conv.ID, PlatformMsgID: msgID, Text: "text " + msgID}, msgID)
}

// oldConv creates a conversation for bot/channel/thread with plain SQL, as
// any schema since 0001 takes it: for tests that open the store at an
// earlier migration, where the current code's queries may name columns
// that do not exist yet.
func oldConv(t testing.TB, s *Store, bot, channel, thread string) Conversation {
	t.Helper()
	c := Conversation{ID: uuid.NewString(), Key: ConversationKey{bot, channel, thread}, Agent: "coder"}
	if _, err := s.db.Read().ExecContext(context.Background(), `INSERT INTO conversations
		(id, bot, channel, thread, agent, created_at, updated_at, last_active_at) VALUES (?, ?, ?, ?, ?, 1, 1, 1)`,
		c.ID, bot, channel, thread, c.Agent); err != nil {
		t.Fatalf("insert conversation: %v", err)
	}
	return c
}
