package webstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/convstore"
	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

// threadIDs lists the thread ids of ts in order.
func threadIDs(ts []WebThread) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Thread)
	}
	return out
}

// TestWebThreadManagement: titles (first message, then a rename), archive,
// sharing by role, search over titles and messages (SQLite's FTS4 table or
// PostgreSQL's full-text index; edits and deletions reindexed) and deletion
// with its tombstone.
func TestWebThreadManagement(t *testing.T) { kit.Each(t, testWebThreadManagement) }

func testWebThreadManagement(t *testing.T, s *Store) {
	ctx := context.Background()
	// The list is ordered by last update in ms: a clock that moves on by one
	// ms per stamp keeps that order from depending on the machine's speed
	// (two writes in one ms tie, and ties go by thread id).
	var tick atomic.Int64
	start := time.Now()
	s.db.SetClock(func() time.Time { return start.Add(time.Duration(tick.Add(1)) * time.Millisecond) })
	add := func(key convstore.ConversationKey, id, author, text string) {
		t.Helper()
		if _, err := s.AddWebMessage(ctx, WebMessage{ID: id, Key: key, Author: author, Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	list := func(user string, q WebThreadQuery) []WebThread {
		t.Helper()
		if q.Limit == 0 {
			q.Limit = 10
		}
		ts, err := s.WebThreads(ctx, "console", user, q)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	pg := convstore.ConversationKey{Bot: "console", Channel: "ana", Thread: "tpg"}
	ci := convstore.ConversationKey{Bot: "console", Channel: "ana", Thread: "tci"}
	bobs := convstore.ConversationKey{Bot: "console", Channel: "bob", Thread: "tbob"}
	add(pg, "m1", "ana", "Migrate the database to Postgres")
	add(pg, "m2", "", "The **schema** has twelve tables.")
	add(ci, "m3", "ana", "Why is CI red?")
	add(bobs, "m4", "bob", "bob's own question")

	got := list("ana", WebThreadQuery{})
	if ids := threadIDs(got); !slices.Equal(ids, []string{"tci", "tpg"}) {
		t.Fatalf("ana's list = %v", ids)
	}
	if th := got[1]; th.Title != "Migrate the database to Postgres" || th.Named || th.Role != WebOwner || th.Owner != "ana" || th.Messages != 2 {
		t.Errorf("tpg = %+v", th)
	}

	// Rename; "" goes back to the first message.
	if err := s.RenameWebThread(ctx, "console", "tpg", "PG move"); err != nil {
		t.Fatal(err)
	}
	if th, _ := s.WebThreadFor(ctx, "console", "tpg", "ana"); th.Title != "PG move" || !th.Named {
		t.Errorf("renamed = %+v", th)
	}

	// Search: words of the title or of one message, as prefixes; the
	// bridge's answers count; punctuation and FTS operators are harmless.
	for q, want := range map[string][]string{
		"pg":            {"tpg"},
		"schema twelve": {"tpg"},
		"schem":         {"tpg"},
		"red ci":        {"tci"},
		"postgres":      {"tpg"},
		"schema red":    nil,            // not in one message
		`"*" -- ( )`:    {"tpg", "tci"}, // no words: everything, the renamed one first
		`OR NEAR`:       nil,            // words, not operators
		"bob":           nil,            // bob's conversation is not ana's
	} {
		if ids := threadIDs(list("ana", WebThreadQuery{Search: q})); !slices.Equal(ids, want) {
			t.Errorf("search %q = %v, want %v", q, ids, want)
		}
	}
	// An edit is reindexed.
	if _, err := s.EditWebMessage(ctx, pg, "m2", "The layout has nine tables.", "", nil); err != nil {
		t.Fatal(err)
	}
	if ids := threadIDs(list("ana", WebThreadQuery{Search: "twelve"})); ids != nil {
		t.Errorf("old text still found: %v", ids)
	}
	if ids := threadIDs(list("ana", WebThreadQuery{Search: "nine"})); !slices.Equal(ids, []string{"tpg"}) {
		t.Errorf("edited text not found: %v", ids)
	}

	// Sharing: bob sees it with his role, can search it; ending it hides it.
	if err := s.ShareWebThread(ctx, "console", "tpg", "bob", WebViewer); err != nil {
		t.Fatal(err)
	}
	if err := s.ShareWebThread(ctx, "console", "tpg", "ana", WebViewer); err != nil {
		t.Fatal(err) // sharing with the owner is a no-op
	}
	if err := s.ShareWebThread(ctx, "console", "tpg", "bob", "admin"); err == nil {
		t.Error("unknown role accepted")
	}
	bobList := list("bob", WebThreadQuery{})
	if ids := threadIDs(bobList); !slices.Equal(ids, []string{"tbob", "tpg"}) && !slices.Equal(ids, []string{"tpg", "tbob"}) {
		t.Fatalf("bob's list = %v", ids)
	}
	if th, _ := s.WebThreadFor(ctx, "console", "tpg", "bob"); th.Role != WebViewer || th.Owner != "ana" {
		t.Errorf("bob's view = %+v", th)
	}
	if err := s.ShareWebThread(ctx, "console", "tpg", "bob", WebParticipant); err != nil {
		t.Fatal(err)
	}
	shares, err := s.WebThreadShares(ctx, "console", "tpg")
	if err != nil || !slices.Equal(shares, []WebShare{{"bob", WebParticipant}}) {
		t.Errorf("shares = %+v, %v", shares, err)
	}
	if th, _ := s.WebThreadFor(ctx, "console", "tpg", "cleo"); th.Role != "" {
		t.Errorf("cleo's role = %q", th.Role)
	}
	if ids := threadIDs(list("bob", WebThreadQuery{Search: "nine"})); !slices.Equal(ids, []string{"tpg"}) {
		t.Errorf("bob's search = %v", ids)
	}

	// Archive moves it to the archived list, restoring brings it back.
	if err := s.ArchiveWebThread(ctx, "console", "tci", true); err != nil {
		t.Fatal(err)
	}
	if ids := threadIDs(list("ana", WebThreadQuery{})); !slices.Equal(ids, []string{"tpg"}) {
		t.Errorf("after archive = %v", ids)
	}
	if ids := threadIDs(list("ana", WebThreadQuery{Archived: true})); !slices.Equal(ids, []string{"tci"}) {
		t.Errorf("archived = %v", ids)
	}
	if err := s.ArchiveWebThread(ctx, "console", "tci", false); err != nil {
		t.Fatal(err)
	}

	// Delete: messages, shares and search entries go; the id stays taken.
	if err := s.DeleteWebThread(ctx, "console", "tpg"); err != nil {
		t.Fatal(err)
	}
	if ids := threadIDs(list("ana", WebThreadQuery{})); !slices.Equal(ids, []string{"tci"}) {
		t.Errorf("after delete = %v", ids)
	}
	if ids := threadIDs(list("bob", WebThreadQuery{})); !slices.Equal(ids, []string{"tbob"}) {
		t.Errorf("bob after delete = %v", ids)
	}
	if msgs, _ := s.WebMessages(ctx, pg, 0, 0); len(msgs) != 0 {
		t.Errorf("messages left: %+v", msgs)
	}
	_, err = s.WebThreadFor(ctx, "console", "tpg", "ana")
	storetest.WantErrIs(t, "deleted thread", err, sqldb.ErrNotFound)
	if del, err := s.WebThreadDeleted(ctx, "console", "tpg"); !del || err != nil {
		t.Errorf("deleted = %v, %v", del, err)
	}
	if s.db.Dialect().Name() == sqldb.DriverSQLite { // PostgreSQL's index is of the table itself
		var fts int
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM web_messages_fts WHERE web_messages_fts MATCH 'nine'`).Scan(&fts); err != nil || fts != 0 {
			t.Errorf("search index keeps %d deleted rows (%v)", fts, err)
		}
	}
	err = s.RenameWebThread(ctx, "console", "tpg", "x")
	storetest.WantErrIs(t, "rename deleted", err, sqldb.ErrNotFound)
	// A late post into the deleted conversation does not bring it back.
	add(pg, "m9", "", "late answer")
	if ids := threadIDs(list("ana", WebThreadQuery{})); !slices.Equal(ids, []string{"tci"}) {
		t.Errorf("after a late post = %v", ids)
	}
	// Another user cannot take the thread over by writing into it.
	if th, err := s.WebThreadFor(ctx, "console", "tci", "bob"); err != nil || th.Owner != "ana" || th.Role != "" {
		t.Errorf("tci for bob = %+v, %v", th, err)
	}
}

// TestWebThreadSearchWords: both databases split a message into the same
// words — at punctuation, paths and underscores included — and match a
// typed word as the start of one, in any case.
func TestWebThreadSearchWords(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		for i, text := range []string{
			"see config/example.yaml and docs/postgres.md",
			"RENAME web_threads.title, v1.5",
			"Die Größe der Datei",
		} {
			id := string(rune('a' + i))
			if _, err := s.AddWebMessage(ctx, WebMessage{ID: id, Key: convstore.ConversationKey{Bot: "console", Channel: "ana", Thread: "t" + id}, Author: "ana", Text: text}); err != nil {
				t.Fatal(err)
			}
			// A title that matches nothing, so only the messages are searched.
			if err := s.RenameWebThread(ctx, "console", "t"+id, "x"); err != nil {
				t.Fatal(err)
			}
		}
		for q, want := range map[string][]string{
			"yaml":          {"ta"},
			"example":       {"ta"},
			"docs postgres": {"ta"},
			"threads":       {"tb"},
			"Thread Rena":   {"tb"},
			"5":             {"tb"},
			"v1":            {"tb"},
			"Größe":         {"tc"},
			"datei":         {"tc"},
			"ample":         nil, // a prefix, not any part of a word
			"yaml threads":  nil, // not in one message
		} {
			ts, err := s.WebThreads(ctx, "console", "ana", WebThreadQuery{Search: q, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if ids := threadIDs(ts); !slices.Equal(ids, want) {
				t.Errorf("search %q = %v, want %v", q, ids, want)
			}
		}
	})
}

// TestWebMessagesMatching: the messages of one conversation that the search
// index matches, newest first and at most the limit, found however many
// newer messages follow them (600 here); other conversations' and owners'
// messages never.
func TestWebMessagesMatching(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		key := convstore.ConversationKey{Bot: "console", Channel: "ana", Thread: "tlong"}
		add := func(key convstore.ConversationKey, id, text string) {
			t.Helper()
			if _, err := s.AddWebMessage(ctx, WebMessage{ID: id, Key: key, Author: key.Channel, Text: text}); err != nil {
				t.Fatal(err)
			}
		}
		add(key, "old1", "the Zanzibar rollout plan, step one")
		add(key, "old2", "zanzibar again, step two")
		for i := range 600 {
			add(key, fmt.Sprintf("n%03d", i), fmt.Sprintf("filler message %d", i))
		}
		add(convstore.ConversationKey{Bot: "console", Channel: "ana", Thread: "tother"}, "o1", "zanzibar elsewhere")
		add(convstore.ConversationKey{Bot: "console", Channel: "bob", Thread: "tlong"}, "o2", "zanzibar by bob")

		for _, tc := range []struct {
			q     string
			limit int
			want  []string
		}{
			{"zanzi", 10, []string{"zanzibar again, step two", "the Zanzibar rollout plan, step one"}},
			{"zanzibar step", 1, []string{"zanzibar again, step two"}},
			{"rollout ZANZIBAR", 10, []string{"the Zanzibar rollout plan, step one"}},
			{"nowhere", 10, nil},
			{"  ,; ", 10, nil},
		} {
			got, err := s.WebMessagesMatching(ctx, key, tc.q, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("matching %q (limit %d) = %q, want %q", tc.q, tc.limit, got, tc.want)
			}
		}
		if _, err := s.WebMessagesMatching(ctx, key, "zanzibar", 0); !errors.Is(err, sqldb.ErrInvalidArgument) {
			t.Errorf("limit 0: %v", err)
		}
	})
}
