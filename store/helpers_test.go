package store

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/migrations"
	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

// kit runs every test on SQLite and PostgreSQL (storetest).
var kit storetest.Kit

func TestMain(m *testing.M) { os.Exit(kit.Run(m)) }

// eachStore runs f once per driver, as subtests "sqlite" and "postgres",
// each with a fresh store at the newest schema (closed when f's test ends).
// Without PostgreSQL the postgres subtest is skipped, or fails under CI.
func eachStore(t *testing.T, f func(t *testing.T, s *Store)) {
	t.Helper()
	kit.Each(t, func(t *testing.T, db *sqldb.DB) { f(t, compose(db)) })
}

// eachStoreB is eachStore for benchmarks.
func eachStoreB(b *testing.B, f func(b *testing.B, s *Store)) {
	b.Helper()
	kit.EachB(b, func(b *testing.B, db *sqldb.DB) { f(b, compose(db)) })
}

// openTest opens a SQLite store on a fresh file in t.TempDir and closes it
// at the end of the test.
func openTest(t testing.TB) *Store {
	t.Helper()
	return openTestDriver(t, DriverSQLite)
}

// openTestDriver opens a fresh store of driver at the newest schema and
// closes it at the end of the test.
func openTestDriver(t testing.TB, driver string) *Store {
	t.Helper()
	return compose(kit.Open(t, driver))
}

// open opens db migrated with ms as a Store, or with Open or OpenPostgres
// when ms is nil (every embedded migration); the caller closes it.
func open(ctx context.Context, db storetest.DB, ms []migrations.Migration) (*Store, error) {
	switch {
	case ms == nil && db.Driver == DriverPostgres:
		return OpenPostgres(ctx, db.Where, nil)
	case ms == nil:
		return Open(ctx, db.Where, nil)
	}
	d, err := db.Open(ctx, ms)
	if err != nil {
		return nil, err
	}
	return compose(d), nil
}

// useClock makes s stamp rows with a storetest.Clock starting at start.
func useClock(s *Store, start time.Time, step time.Duration) *storetest.Clock {
	return storetest.UseClock(s.db, start, step)
}

// newConv creates a conversation for bot/channel/thread.
func newConv(t testing.TB, s *Store, bot, channel, thread string) Conversation {
	t.Helper()
	c, _, err := s.GetOrCreateConversation(context.Background(), ConversationKey{Bot: bot, Channel: channel, Thread: thread}, "coder", "U1")
	if err != nil {
		t.Fatalf("GetOrCreateConversation: %v", err)
	}
	return c
}

// enqueue stores a message with platform id msgID in conv.
func enqueue(t testing.TB, s *Store, conv Conversation, msgID string) InboxMessage {
	t.Helper()
	m, dup, err := s.Enqueue(context.Background(), InboxMessage{ConversationID: conv.ID, PlatformMsgID: msgID, Text: "text " + msgID})
	if err != nil {
		t.Fatalf("Enqueue %s: %v", msgID, err)
	}
	if dup {
		t.Fatalf("Enqueue %s: unexpected duplicate", msgID)
	}
	return m
}
