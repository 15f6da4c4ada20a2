package coord

import (
	"context"
	"os"
	"testing"

	"github.com/agentbridge/agentbridge/store/convstore"
	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

// kit runs every test on SQLite and PostgreSQL (storetest).
var kit storetest.Kit

func TestMain(m *testing.M) { os.Exit(kit.Run(m)) }

// eachStore runs f once per driver, as subtests "sqlite" and "postgres",
// each with a fresh store at the newest schema (closed when f's test ends).
func eachStore(t *testing.T, f func(t *testing.T, s *Coordinator)) {
	t.Helper()
	kit.Each(t, func(t *testing.T, db *sqldb.DB) { f(t, New(db)) })
}

// openTest opens a coordinator on a fresh SQLite database, closed at the
// end of the test.
func openTest(t testing.TB) *Coordinator {
	t.Helper()
	return New(kit.Open(t, sqldb.DriverSQLite))
}

// newConv creates a conversation for bot/channel/thread in s's database.
func newConv(t testing.TB, s *Coordinator, bot, channel, thread string) convstore.Conversation {
	t.Helper()
	c, _, err := convstore.New(s.db).GetOrCreateConversation(context.Background(), convstore.ConversationKey{Bot: bot, Channel: channel, Thread: thread}, "coder", "U1")
	if err != nil {
		t.Fatalf("GetOrCreateConversation: %v", err)
	}
	return c
}
