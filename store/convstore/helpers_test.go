package convstore

import (
	"os"
	"testing"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
)

// kit runs every test on SQLite and PostgreSQL, each on a fresh Store
// (storetest).
var kit = storetest.Kit[*Store]{New: New}

func TestMain(m *testing.M) { os.Exit(kit.Run(m)) }

// newConv creates a conversation for bot/channel/thread.
func newConv(t testing.TB, s *Store, bot, channel, thread string) Conversation {
	return storetest.NewConv(t, s, ConversationKey{bot, channel, thread})
}

// enqueue stores a message with platform id msgID in conv.
func enqueue(t testing.TB, s *Store, conv Conversation, msgID string) InboxMessage {
	return storetest.Enqueue(t, s, InboxMessage{ConversationID: conv.ID, PlatformMsgID: msgID, Text: "text " + msgID}, msgID)
}
