package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
)

// fillStore writes a little of everything through the store's methods:
// every table gets rows, with NULLs, blobs, flags and removed rows.
func fillStore(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	storetest.UseClock(s.db, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), time.Second)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	a := storetest.NewConvAt(t, s, "team", "C1", "T1")
	b := storetest.NewConvAt(t, s, "phone", "155", "")
	must(s.SetSessionID(ctx, a.ID, "5e55-a"))
	must(s.NoteActivity(ctx, a.ID, "first prompt\nsecond line"))
	m1 := storetest.Enqueue(t, s, InboxMessage{ConversationID: a.ID, PlatformMsgID: "m1", Text: "text m1"}, "m1")
	must(s.MarkInbox(ctx, m1.ID, InboxCompleted, ""))
	if _, _, err := s.Enqueue(ctx, InboxMessage{ConversationID: b.ID, PlatformMsgID: "m2", Text: "hi", Files: []byte(`[{"n":1}]`),
		ReplyTo: "CARD1", Quoted: "Allow?", UserID: "U2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordApprovalRequest(ctx, Approval{ID: "req-1", ConversationID: a.ID, ToolName: "Bash", Input: []byte(`{"command":"ls"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordApprovalDecision(ctx, "req-1", DecisionAllow, "U1", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordApprovalRequest(ctx, Approval{ID: "req-2", ConversationID: b.ID, ToolName: "Write"}); err != nil {
		t.Fatal(err)
	}
	must(s.SetApprovalCardRef(ctx, "req-2", `{"ID":"CARD1"}`, "CARD1"))
	if _, err := s.EndTurn(ctx, Usage{ConversationID: a.ID, SessionID: "5e55-a", UserID: "U1", CostUSD: 0.25, InputTokens: 10, IsError: true},
		[]OutboxMessage{{ConversationID: a.ID, Text: "posted"}, {ConversationID: a.ID, Text: "waiting", ReplyTo: "m1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddGrants(ctx, a.ID, []Grant{{Tool: "Bash", Match: "ls *", GrantedBy: "U1"}, {Tool: "Read"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RemoveGrant(ctx, a.ID, 2, "U1"); err != nil {
		t.Fatal(err)
	}
	sc, err := s.AddSchedule(ctx, Schedule{Source: ScheduleFromChat, Name: "daily", Key: a.Key, Cron: "0 9 * * *", Prompt: "p", NewThread: true})
	if err != nil {
		t.Fatal(err)
	}
	must(s.RecordScheduleRun(ctx, sc.ID, time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), m1.ID))
	if _, _, _, err := s.SyncConfigSchedules(ctx, []Schedule{{Name: "cfg", Key: b.Key, Cron: "@hourly", Prompt: "q"}}); err != nil {
		t.Fatal(err)
	}
	web := ConversationKey{Bot: "console", Channel: "ana", Thread: "w1"}
	if _, err := s.AddWebMessage(ctx, WebMessage{ID: "w-1", Key: web, Author: "ana", Text: "hello", Files: []byte(`["f"]`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddWebMessage(ctx, WebMessage{ID: "w-2", Key: web, Text: "card"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EditWebMessage(ctx, web, "w-2", "card decided", "req-9", []byte(`[]`)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutSessionState(ctx, nil, SessionState{SessionID: "sess-1", ConversationID: a.ID, Data: []byte{0x1f, 0x8b, 0, 255}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AcquireLease(ctx, "conversation:"+a.ID, "replica-1", time.Hour); err != nil { // its token carries over
		t.Fatal(err)
	}
	must(s.AddWebUpload(ctx, WebUpload{ID: "up-1", Key: web, Name: "a.png", MimeType: "image/png", Data: []byte{0, 1, 2, 255}}))
	if _, err := s.AddWebMessage(ctx, WebMessage{ID: "w-3", Key: ConversationKey{Bot: "console", Channel: "bob", Thread: "w2"}, Author: "bob", Text: "see config/example.yaml"}); err != nil {
		t.Fatal(err)
	}
	must(s.RenameWebThread(ctx, "console", "w1", "Greeting"))
	must(s.ShareWebThread(ctx, "console", "w1", "bob", WebParticipant))
	must(s.ArchiveWebThread(ctx, "console", "w2", true))
	must(s.RecordWebTool(ctx, WebTool{Key: web, ID: "tool-1", Name: "Bash", Input: `{"command":"ls"}`}))
	must(s.RecordWebTool(ctx, WebTool{Key: web, ID: "tool-1", Output: "a\nb", IsError: true, Done: true}))
	must(s.RecordWebTool(ctx, WebTool{Key: web, ID: "tool-2", Name: "Read", Input: `{}`}))
	if _, err := s.RecordFeedback(ctx, Feedback{ReplyID: "out-1", ConversationID: a.ID, UserID: "U1", Rating: RatingBad}); err != nil {
		t.Fatal(err)
	}
	must(s.AddWebSession(ctx, WebSession{ID: []byte{9, 8, 7}, User: "ana", TokenFP: []byte{1}, Created: time.Now(), Expires: time.Now().Add(time.Hour)}, 3))
	if _, _, err := s.WebSessionKey(ctx, bytes.Repeat([]byte{0xab}, 32)); err != nil {
		t.Fatal(err)
	}
}

// dumpStore reads back through the store's methods what fillStore wrote.
func dumpStore(t *testing.T, s *Store) string {
	t.Helper()
	ctx := context.Background()
	d := map[string]any{}
	add := func(name string, v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		d[name] = v
	}
	convs, err := s.ListConversations(ctx)
	add("conversations", convs, err)
	for _, c := range convs {
		v1, err := s.UndeliveredInbox(ctx, c.ID)
		add("undelivered "+c.Key.String(), v1, err)
		v2, err := s.ApprovalsForConversation(ctx, c.ID)
		add("approvals "+c.Key.String(), v2, err)
		v3, err := s.GrantsForConversation(ctx, c.ID)
		add("grants "+c.Key.String(), v3, err)
		v4, err := s.UsageTotals(ctx, c.ID)
		add("usage "+c.Key.String(), v4, err)
		v5, err := s.ConversationTitle(ctx, c.ID)
		add("title "+c.Key.String(), v5, err)
		v6, err := s.SessionSummary(ctx, c.ID)
		add("summary "+c.Key.String(), v6, err)
	}
	v, err := s.PendingOutbox(ctx)
	add("pending outbox", v, err)
	v2, err := s.ActiveSchedules(ctx)
	add("schedules", v2, err)
	ls, err := s.Leases(ctx, "")
	add("leases", ls, err)
	ss, err := s.GetSessionState(ctx, "sess-1")
	ss.UpdatedAt = ss.UpdatedAt.Truncate(time.Millisecond)
	add("session state", ss, err)
	v3, err := s.WebMessages(ctx, ConversationKey{Bot: "console", Channel: "ana", Thread: "w1"}, 0, 0)
	add("web messages", v3, err)
	v4, err := s.WebUpload(ctx, "up-1")
	add("web upload", v4, err)
	v5, err := s.WebSession(ctx, []byte{9, 8, 7})
	add("web session", v5, err)
	var key []byte // read behind WebSessionKey's back, which would store one
	err = s.db.QueryRowContext(ctx, `SELECT secret FROM web_session_key`).Scan(&key)
	add("web session key", key, err)
	for _, user := range []string{"ana", "bob"} {
		for _, archived := range []bool{false, true} {
			// Search goes through the target's own index (not copied).
			for _, search := range []string{"", "hello", "greet", "yaml"} {
				ts, err := s.WebThreads(ctx, "console", user, WebThreadQuery{Archived: archived, Search: search, Limit: 10})
				add(fmt.Sprintf("web threads of %s archived=%v search=%q", user, archived, search), ts, err)
			}
		}
	}
	shares, err := s.WebThreadShares(ctx, "console", "w1")
	add("web shares", shares, err)
	for _, id := range []string{"tool-1", "tool-2"} {
		tool, err := s.WebTool(ctx, ConversationKey{Bot: "console", Channel: "ana", Thread: "w1"}, id)
		add("web tool "+id, tool, err)
	}
	fb, err := s.RecentFeedback(ctx, 10)
	add("feedback", fb, err)
	v6, err := s.DecidedApprovals(ctx, 10)
	add("audit", v6, err)
	v7, err := s.UsageByBotDay(ctx, time.Time{})
	add("usage by day", v7, err)
	b, err := json.MarshalIndent(d, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCopySQLiteToPostgresAndBack: a filled SQLite store copied to an
// empty PostgreSQL store reads back the same through every method, new
// rows continue its ids, a second copy into it is refused untouched, and
// the copy back to an empty SQLite store reads the same again.
func TestCopySQLiteToPostgresAndBack(t *testing.T) {
	ctx := context.Background()
	src := kit.Open(t, DriverSQLite)
	fillStore(t, src)
	want := dumpStore(t, src)

	dst := kit.Open(t, DriverPostgres)
	counts, err := Copy(ctx, src, dst)
	if err != nil {
		t.Fatalf("Copy: %v", err)
	}
	got := map[string]int64{}
	for _, c := range counts {
		got[c.Table] = c.Rows
	}
	for table, n := range map[string]int64{"conversations": 2, "inbox": 2, "outbox": 2, "approvals": 2, "usage": 1, "grants": 2,
		"schedules": 2, "web_messages": 3, "web_uploads": 1, "web_sessions": 1, "web_threads": 2, "web_shares": 1, "web_tools": 2,
		"feedback": 1, "leases": 1, "session_states": 1, "web_session_key": 1} {
		if got[table] != n {
			t.Errorf("copied %d rows of %s, want %d (all counts %v)", got[table], table, n, counts)
		}
	}
	if counts[0].Table != "conversations" {
		t.Errorf("first table copied: %s, want conversations (the others refer to it)", counts[0].Table)
	}
	if d := dumpStore(t, dst); d != want {
		t.Errorf("PostgreSQL reads back differently:\n%s\nwant:\n%s", d, want)
	}
	// Search finds the copied messages through PostgreSQL's own index.
	if ts, err := dst.WebThreads(ctx, "console", "bob", WebThreadQuery{Archived: true, Search: "yaml", Limit: 10}); err != nil ||
		len(ts) != 1 || ts[0].Thread != "w2" {
		t.Errorf("search after the copy = %+v, %v; want w2", ts, err)
	}

	// New rows continue after the copied ones.
	conv, err := dst.GetConversation(ctx, ConversationKey{Bot: "team", Channel: "C1", Thread: "T1"})
	if err != nil {
		t.Fatal(err)
	}
	m := storetest.Enqueue(t, dst, InboxMessage{ConversationID: conv.ID, PlatformMsgID: "after-copy", Text: "text after-copy"}, "after-copy")
	if pend, err := dst.PendingInbox(ctx, conv.ID); err != nil || len(pend) != 1 || pend[0].ID != m.ID {
		t.Errorf("pending after the copy = %+v, %v", pend, err)
	}
	gs, err := dst.AddGrants(ctx, conv.ID, []Grant{{Tool: "Edit"}})
	if err != nil || gs[0].Num != 3 || gs[0].ID <= 2 {
		t.Errorf("grant after the copy = %+v, %v; want num 3 and a new id", gs, err)
	}
	if sc, err := dst.AddSchedule(ctx, Schedule{Source: ScheduleFromChat, Name: "n", Key: conv.Key, Cron: "@daily", Prompt: "p"}); err != nil || sc.ID <= 2 {
		t.Errorf("schedule after the copy = %+v, %v", sc, err)
	}

	// A second copy is refused and changes nothing.
	before := dumpStore(t, dst)
	if _, err := Copy(ctx, src, dst); !errors.Is(err, ErrTargetNotEmpty) {
		t.Errorf("second Copy: err = %v, want ErrTargetNotEmpty", err)
	}
	if dumpStore(t, dst) != before {
		t.Error("refused Copy changed the target")
	}

	// And back: PostgreSQL to a new SQLite file.
	back := kit.Open(t, DriverSQLite)
	src2 := kit.Open(t, DriverPostgres)
	if _, err := Copy(ctx, src, src2); err != nil {
		t.Fatal(err)
	}
	if _, err := Copy(ctx, src2, back); err != nil {
		t.Fatalf("Copy back: %v", err)
	}
	if d := dumpStore(t, back); d != want {
		t.Errorf("SQLite after the round trip reads differently:\n%s\nwant:\n%s", d, want)
	}
	if ts, err := back.WebThreads(ctx, "console", "ana", WebThreadQuery{Search: "hello", Limit: 10}); err != nil ||
		len(ts) != 1 || ts[0].Thread != "w1" {
		t.Errorf("search after the round trip = %+v, %v; want w1 (the FTS4 index rebuilt by its triggers)", ts, err)
	}
}

// TestCopyRefusesOtherSchema: stores at different schema versions are
// not copied.
func TestCopyRefusesOtherSchema(t *testing.T) {
	ctx := context.Background()
	src := kit.Open(t, DriverSQLite)
	old, err := open(ctx, kit.Empty(t, DriverPostgres), storetest.Migrations(t, DriverPostgres)[:5])
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if _, err := Copy(ctx, src, old); err == nil {
		t.Fatal("Copy to an older schema succeeded")
	}
}
