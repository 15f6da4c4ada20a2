package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentbridge/agentbridge/migrations"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

// TestConcurrentWritersNeverBusy: many goroutines writing at once queue for
// the store's one writer connection instead of racing in SQLite's busy
// handler. With the busy timeout at zero, any write that met another
// in-process writer would fail with "database is locked" at once; none
// may.
func TestConcurrentWritersNeverBusy(t *testing.T) {
	ctx := context.Background()
	ms, err := migrations.List()
	if err != nil {
		t.Fatal(err)
	}
	params := strings.Replace(sqldb.SQLiteParams, "_busy_timeout=5000", "_busy_timeout=0", 1)
	if params == sqldb.SQLiteParams {
		t.Fatal("sqldb.SQLiteParams has no _busy_timeout=5000 to replace")
	}
	db, err := sqldb.Open(ctx, filepath.Join(t.TempDir(), "bridge.db"), sqldb.Options{Migrations: ms, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	s := compose(db)
	defer s.Close()
	concurrentWriters(t, s)
}

// TestConcurrentWritersPostgres: the same load on PostgreSQL.
func TestConcurrentWritersPostgres(t *testing.T) {
	concurrentWriters(t, kit.Open(t, DriverPostgres))
}

// concurrentWriters runs 32 writers at once on s; none may fail.
func concurrentWriters(t *testing.T, s *Store) {
	ctx := context.Background()

	const writers, each = 32, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			conv, _, err := s.GetOrCreateConversation(ctx, ConversationKey{Bot: "b", Channel: "C", Thread: fmt.Sprint(w)}, "coder", "U")
			if err != nil {
				errs <- err
				return
			}
			for i := range each {
				m, _, err := s.Enqueue(ctx, InboxMessage{ConversationID: conv.ID, Bot: "b", PlatformMsgID: fmt.Sprint(w, "-", i), Text: "hi"})
				if err == nil {
					err = s.MarkInbox(ctx, m.ID, InboxSent, "")
				}
				if err == nil {
					_, err = s.PendingInbox(ctx, conv.ID) // a read alongside the writes
				}
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 3 {
			t.Error(err)
		}
	}
	if n > 0 {
		t.Errorf("%d of %d operations failed", n, writers*each)
	}
}
