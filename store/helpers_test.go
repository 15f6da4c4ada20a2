package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// openTest opens a store on a fresh file in t.TempDir and closes it at the
// end of the test.
func openTest(t testing.TB) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "bridge.db"), nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// stepClock is a deterministic clock: every reading is step later than the
// previous one (step 0 freezes it).
type stepClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

// useClock makes s read time from a stepClock starting at start.
func useClock(s *Store, start time.Time, step time.Duration) *stepClock {
	c := &stepClock{t: start, step: step}
	s.now = c.Now
	return c
}

// newConv creates a conversation for bot/channel/thread.
func newConv(t testing.TB, s *Store, bot, channel, thread string) Conversation {
	t.Helper()
	c, _, err := s.GetOrCreateConversation(context.Background(), ConversationKey{bot, channel, thread}, "coder", "U1")
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

// countRows runs a COUNT query.
func countRows(t testing.TB, db *sql.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func wantErrIs(t testing.TB, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error = %v, want %v", what, err, target)
	}
}
