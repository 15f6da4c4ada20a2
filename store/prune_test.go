package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/testkit"
	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

// pruneFixture fills a store with rows of every kind and state, some
// finished before the cutoff and some after, and records which ids must
// survive Prune(cutoff).
type pruneFixture struct {
	s      *Store
	clk    *storetest.Clock
	old    time.Time // well before the cutoff
	recent time.Time // after the cutoff
	cutoff time.Time
	keep   map[string][]string // table → ids (conversations, inbox, outbox, approvals) or conversation ids (usage)
	gone   map[string][]string
}

func newPruneFixture(t *testing.T, s *Store) *pruneFixture {
	t.Helper()
	base := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	f := &pruneFixture{
		s:      s,
		old:    base,
		cutoff: base.Add(50 * 24 * time.Hour),
		recent: base.Add(100 * 24 * time.Hour),
		keep:   map[string][]string{},
		gone:   map[string][]string{},
	}
	f.clk = storetest.UseClock(s.db, base, time.Millisecond)
	return f
}

func (f *pruneFixture) at(ts time.Time) { f.clk.Set(ts) }

func (f *pruneFixture) expect(kept bool, table, id string) {
	if kept {
		f.keep[table] = append(f.keep[table], id)
	} else {
		f.gone[table] = append(f.gone[table], id)
	}
}

// conv creates a conversation at ts.
func (f *pruneFixture) conv(t *testing.T, ts time.Time, thread string, kept bool) Conversation {
	t.Helper()
	f.at(ts)
	c := storetest.NewConvAt(t, f.s, "bot", "C", thread)
	f.expect(kept, "conversations", c.ID)
	return c
}

// inbox enqueues a message at created and moves it through states at done.
func (f *pruneFixture) inbox(t *testing.T, c Conversation, created, done time.Time, kept bool, states ...InboxState) {
	t.Helper()
	f.at(created)
	id := fmt.Sprintf("%s-%d", c.Key.Thread, len(f.keep["inbox"])+len(f.gone["inbox"]))
	m := storetest.Enqueue(t, f.s, InboxMessage{ConversationID: c.ID, PlatformMsgID: id, Text: "text " + id}, id)
	f.at(done)
	for _, st := range states {
		if err := f.s.MarkInbox(context.Background(), m.ID, st, ""); err != nil {
			t.Fatalf("MarkInbox %s: %v", st, err)
		}
	}
	f.expect(kept, "inbox", m.ID)
}

// outbox adds a reply at created and, at done, posts it or fails it for good.
func (f *pruneFixture) outbox(t *testing.T, c Conversation, created, done time.Time, final OutboxState, kept bool) {
	t.Helper()
	ctx := context.Background()
	f.at(created)
	m, err := f.s.AddOutbox(ctx, OutboxMessage{ConversationID: c.ID, Text: "reply"})
	if err != nil {
		t.Fatalf("AddOutbox: %v", err)
	}
	f.at(done)
	switch final {
	case OutboxPosted:
		err = f.s.MarkOutboxPosted(ctx, m.ID)
	case OutboxFailed:
		_, err = f.s.MarkOutboxFailed(ctx, m.ID, "boom")
	}
	if err != nil {
		t.Fatalf("finish outbox %s: %v", final, err)
	}
	f.expect(kept, "outbox", m.ID)
}

// approval records a request at created and, unless decided is zero, its
// decision at decided.
func (f *pruneFixture) approval(t *testing.T, c Conversation, created, decided time.Time, kept bool) {
	t.Helper()
	ctx := context.Background()
	f.at(created)
	id := fmt.Sprintf("req-%d", len(f.keep["approvals"])+len(f.gone["approvals"]))
	if _, err := f.s.RecordApprovalRequest(ctx, Approval{ID: id, ConversationID: c.ID, ToolName: "Bash"}); err != nil {
		t.Fatalf("RecordApprovalRequest: %v", err)
	}
	if !decided.IsZero() {
		f.at(decided)
		if _, err := f.s.RecordApprovalDecision(ctx, id, DecisionAllow, "U1", ""); err != nil {
			t.Fatalf("RecordApprovalDecision: %v", err)
		}
	}
	f.expect(kept, "approvals", id)
}

// usage records a result of c at ts; usage rows are identified by session id.
func (f *pruneFixture) usage(t *testing.T, c Conversation, ts time.Time, kept bool) {
	t.Helper()
	f.at(ts)
	id := fmt.Sprintf("sess-%d", len(f.keep["usage"])+len(f.gone["usage"]))
	if err := f.s.AddUsage(context.Background(), Usage{ConversationID: c.ID, SessionID: id, CostUSD: 0.5}); err != nil {
		t.Fatalf("AddUsage: %v", err)
	}
	f.expect(kept, "usage", id)
}

// ids returns the ids left in table.
func (f *pruneFixture) ids(t *testing.T, table string) []string {
	t.Helper()
	col := "id"
	if table == "usage" {
		col = "session_id"
	}
	rows, err := f.s.db.Read().Query(`SELECT ` + col + ` FROM ` + table)
	if err != nil {
		t.Fatalf("list %s: %v", table, err)
	}
	out, err := sqldb.Collect(rows, func(r sqldb.Scanner) (string, error) {
		var id string
		return id, r.Scan(&id)
	})
	if err != nil {
		t.Fatalf("list %s: %v", table, err)
	}
	slices.Sort(out)
	return out
}

// TestPruneKeepsExactlyWhatIsUnfinishedOrRecent fills a real database file
// with rows of every table, state and age and checks that Prune deletes
// exactly the finished rows older than the cutoff and the conversations left
// empty, in batches smaller than the backlog.
func TestPruneKeepsExactlyWhatIsUnfinishedOrRecent(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		f := newPruneFixture(t, s)
		ctx := context.Background()
		old, recent := f.old, f.recent
		var never time.Time

		// Everything finished long ago: all of it goes, the conversation too.
		done := f.conv(t, old, "done", false)
		f.inbox(t, done, old, old, false, InboxCompleted)
		f.inbox(t, done, old, old, false, InboxSent, InboxStarted, InboxCancelled)
		f.inbox(t, done, old, old, false, InboxFailed)
		f.outbox(t, done, old, old, OutboxPosted, false)
		f.outbox(t, done, old, old, OutboxFailed, false)
		f.approval(t, done, old, old, false)
		f.usage(t, done, old, false)

		// Old but unfinished: nothing of it goes, so the conversation stays.
		busy := f.conv(t, old, "busy", true)
		f.inbox(t, busy, old, old, true) // pending
		f.inbox(t, busy, old, old, true, InboxSent)
		f.inbox(t, busy, old, old, true, InboxStarted)
		f.outbox(t, busy, old, old, OutboxPending, true)
		f.approval(t, busy, old, never, true) // open
		f.usage(t, busy, old, false)

		// Old conversation, recently finished rows: they stay, and so does it.
		active := f.conv(t, old, "active", true)
		f.inbox(t, active, old, recent, true, InboxCompleted) // created old, completed recently
		f.inbox(t, active, recent, recent, true, InboxFailed)
		f.outbox(t, active, old, recent, OutboxPosted, true)
		f.approval(t, active, old, recent, true) // decided recently
		f.usage(t, active, recent, true)

		// Some of each: the old finished rows go, the conversation stays.
		mixed := f.conv(t, old, "mixed", true)
		f.inbox(t, mixed, old, old, false, InboxCompleted)
		f.inbox(t, mixed, recent, recent, true, InboxCompleted)
		f.usage(t, mixed, old, false)

		// Conversations without rows: by age and last change.
		f.conv(t, old, "empty-old", false)
		f.conv(t, recent, "empty-new", true)
		changed := f.conv(t, old, "changed", true)
		f.at(recent)
		if err := f.s.SetModel(ctx, changed.ID, "opus"); err != nil { // an admin's !model: a recent change
			t.Fatal(err)
		}
		// An old grant ("Always allow") keeps its conversation: grants are
		// never pruned.
		granted := f.conv(t, old, "granted", true)
		if _, err := f.s.AddGrants(ctx, granted.ID, []Grant{{Tool: "Bash", Match: "git status", GrantedBy: "U1"}}); err != nil {
			t.Fatal(err)
		}
		// A row of a table this package does not know refers to it: it stays.
		referred := f.conv(t, old, "referred", true)
		if _, err := f.s.db.Read().Exec(`CREATE TABLE notes (conv TEXT NOT NULL REFERENCES conversations (id))`); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.db.Read().Exec(`INSERT INTO notes (conv) VALUES (?)`, referred.ID); err != nil {
			t.Fatal(err)
		}

		f.s.pruneBatch = 2 // smaller than every backlog: batches must loop
		got, err := f.s.Prune(ctx, f.cutoff)
		if err != nil {
			t.Fatalf("Prune: %v", err)
		}
		want := PruneCounts{Inbox: 4, Outbox: 2, Approvals: 1, Usage: 3, Conversations: 2}
		if got != want {
			t.Errorf("Prune counts = %+v, want %+v", got, want)
		}
		if gs, err := f.s.ActiveGrants(ctx, granted.ID); err != nil || len(gs) != 1 {
			t.Errorf("grants after prune = %v, %v; want the one kept", gs, err)
		}
		for _, table := range []string{"conversations", "inbox", "outbox", "approvals", "usage"} {
			wantIDs := slices.Sorted(slices.Values(f.keep[table]))
			if ids := f.ids(t, table); !slices.Equal(ids, wantIDs) {
				t.Errorf("%s left = %v\nwant %v (deleted should be %v)", table, ids, wantIDs, f.gone[table])
			}
		}

		// A second run finds nothing more.
		again, err := f.s.Prune(ctx, f.cutoff)
		if err != nil || again != (PruneCounts{}) {
			t.Errorf("second Prune = %+v, %v; want nothing deleted", again, err)
		}
		// What stayed still works: the pending message is delivered, the totals
		// count what is left.
		if ids, err := f.s.ConversationsWithUndelivered(ctx); err != nil || !slices.Equal(ids, []string{busy.ID}) {
			t.Errorf("ConversationsWithUndelivered = %v, %v; want [%s]", ids, err, busy.ID)
		}
		if tot, err := f.s.BotUsageTotals(ctx, "bot"); err != nil || tot.Count != 1 {
			t.Errorf("BotUsageTotals = %+v, %v; want the one recent row", tot, err)
		}
		// The thread of a deleted conversation starts a new one.
		c, created, err := f.s.GetOrCreateConversation(ctx, done.Key, "coder", "U2")
		if err != nil || !created || c.ID == done.ID || c.OwnerUserID != "U2" {
			t.Errorf("conversation after prune = %+v, created %v, %v; want a new one owned by U2", c, created, err)
		}
	})
}

func TestPruneArguments(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		if _, err := s.Prune(context.Background(), time.Time{}); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Prune(zero time) = %v, want ErrInvalidArgument", err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := s.Prune(ctx, time.Now()); !errors.Is(err, context.Canceled) {
			t.Errorf("Prune(cancelled) = %v, want context.Canceled", err)
		}
	})
}

// TestPrunerRunsAtStartLogsCountsAndStops: the background pruner prunes at
// once with the cutoff now - Retention, logs what it deleted, and returns
// when its context ends.
func TestPrunerRunsAtStartLogsCountsAndStops(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		f := newPruneFixture(t, s)
		c := f.conv(t, f.old, "t", false)
		f.inbox(t, c, f.old, f.old, false, InboxCompleted)
		f.usage(t, c, f.old, false)

		h := &testkit.LogRecorder{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		p := Pruner{Store: f.s, Retention: 30 * 24 * time.Hour, Logger: slog.New(h),
			Now: func() time.Time { return f.cutoff.Add(30 * 24 * time.Hour) }}
		go func() { defer close(done); p.Run(ctx) }()

		r := h.Next(t, 10*time.Second)
		if r.Level != slog.LevelInfo || r.Message != "pruned rows older than the retention period" {
			t.Fatalf("first log record = %s %q, want the info record of the prune", r.Level, r.Message)
		}
		var deleted PruneCounts
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "deleted" {
				deleted, _ = a.Value.Any().(PruneCounts)
			}
			return true
		})
		if want := (PruneCounts{Inbox: 1, Usage: 1, Conversations: 1}); deleted != want {
			t.Errorf("logged counts = %+v, want %+v", deleted, want)
		}
		if ids := f.ids(t, "conversations"); len(ids) != 0 {
			t.Errorf("conversations left: %v", ids)
		}
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return after its context ended")
		}
	})
}

func TestPrunerRetentionOffReturnsAtOnce(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		f := newPruneFixture(t, s)
		c := f.conv(t, f.old, "t", true)
		f.inbox(t, c, f.old, f.old, true, InboxCompleted)
		done := make(chan struct{})
		go func() { defer close(done); Pruner{Store: f.s}.Run(context.Background()) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Run with retention 0 did not return")
		}
		if ids := f.ids(t, "inbox"); len(ids) != 1 {
			t.Errorf("inbox left = %v, want the message kept", ids)
		}
	})
}

// TestPrunerAlsoGetsTheCutoff: the extra retention hook runs after each
// prune with the same cutoff, and its failure is logged, not fatal.
func TestPrunerAlsoGetsTheCutoff(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		f := newPruneFixture(t, s)
		h := &testkit.LogRecorder{}
		now := f.cutoff.Add(30 * 24 * time.Hour)
		got := make(chan time.Time, 4)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		p := Pruner{Store: f.s, Retention: 30 * 24 * time.Hour, Logger: slog.New(h), Now: func() time.Time { return now },
			Also: func(_ context.Context, before time.Time) error {
				got <- before
				return errors.New("disk says no")
			}}
		done := make(chan struct{})
		go func() { defer close(done); p.Run(ctx) }()
		select {
		case before := <-got:
			if !before.Equal(f.cutoff) {
				t.Errorf("Also got cutoff %v, want %v", before, f.cutoff)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Also was not called")
		}
		for {
			r := h.Next(t, 10*time.Second)
			if r.Level == slog.LevelWarn && strings.Contains(r.Message, "outside the database failed") {
				break
			}
		}
		cancel()
		<-done
	})
}
