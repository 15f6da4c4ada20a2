package convstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

func TestSummarize(t *testing.T) {
	long := strings.Repeat("é", 150) // 300 bytes
	cases := []struct{ in, want string }{
		{"", ""},
		{"fix the build", "fix the build"},
		{"\n\n  fix   the\tbuild  \nand more", "fix the build"},
		{long, strings.Repeat("é", 98) + "…"}, // 196 bytes + 3
	}
	for _, tc := range cases {
		got := Summarize(tc.in)
		if got != tc.want {
			t.Errorf("Summarize(%.20q) = %q, want %q", tc.in, got, tc.want)
		}
		if len(got) > MaxSummaryBytes {
			t.Errorf("Summarize(%.20q) is %d bytes, over %d", tc.in, len(got), MaxSummaryBytes)
		}
	}
}

func TestListSessions(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		start := time.Date(2025, 3, 10, 8, 0, 0, 0, time.UTC)
		storetest.UseClock(s.db, start, 0)
		mk := func(channel, thread, session string) Conversation {
			t.Helper()
			c := storetest.NewConvAt(t, s, "bot", channel, thread)
			if err := s.SetSessionID(ctx, c.ID, session); err != nil {
				t.Fatal(err)
			}
			c.SessionID = session
			return c
		}
		older := mk("C1", "t1", "aaaa1111-0000-0000-0000-000000000000")
		newer := mk("C1", "t2", "bbbb2222-0000-0000-0000-000000000000")
		silent := mk("C1", "t3", "cccc3333-0000-0000-0000-000000000000") // never had a message
		other := mk("C2", "t1", "dddd4444-0000-0000-0000-000000000000")  // another channel
		storetest.UseClock(s.db, start.Add(time.Minute), 0)
		for _, c := range []Conversation{older, other} {
			if err := s.NoteActivity(ctx, c.ID, "first prompt of "+c.Key.Thread+"\nsecond line"); err != nil {
				t.Fatal(err)
			}
		}
		storetest.UseClock(s.db, start.Add(2*time.Minute), 0)
		if err := s.NoteActivity(ctx, newer.ID, "newer prompt"); err != nil {
			t.Fatal(err)
		}
		if err := s.NoteActivity(ctx, older.ID, "a later message does not replace the summary"); err != nil {
			t.Fatal(err)
		}
		storetest.UseClock(s.db, start.Add(3*time.Minute), 0)
		if err := s.NoteActivity(ctx, newer.ID, "again"); err != nil { // newer is the most recent
			t.Fatal(err)
		}
		for _, u := range []Usage{{ConversationID: older.ID, SessionID: older.SessionID, CostUSD: 0.5}, {ConversationID: older.ID, SessionID: older.SessionID, CostUSD: 0.25},
			{ConversationID: older.ID, SessionID: "an-earlier-session", CostUSD: 9}} {
			if err := s.AddUsage(ctx, u); err != nil {
				t.Fatal(err)
			}
		}

		got, err := s.ListSessions(ctx, "bot", "C1", 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].ID != newer.ID || got[1].ID != older.ID {
			t.Fatalf("ListSessions = %v, want newer then older (not the silent one, nor another channel's)", ids(got))
		}
		if got[1].Summary != "first prompt of t1" || got[1].CostUSD != 0.75 || got[1].Turns != 2 {
			t.Errorf("older = summary %q cost %v turns %d, want its first line and its session's cost only", got[1].Summary, got[1].CostUSD, got[1].Turns)
		}
		if !got[0].LastActiveAt.Equal(start.Add(3 * time.Minute)) {
			t.Errorf("newer last active = %v", got[0].LastActiveAt)
		}
		_ = silent

		if limited, err := s.ListSessions(ctx, "bot", "C1", 1); err != nil || len(limited) != 1 {
			t.Errorf("ListSessions limit 1 = %d rows, %v", len(limited), err)
		}

		found, err := s.SessionsByPrefix(ctx, "bot", "AAAA11")
		if err != nil || len(found) != 1 || found[0].ID != older.ID {
			t.Errorf("SessionsByPrefix(AAAA11) = %v, %v; want older", ids(found), err)
		}
		if found, err := s.SessionsByPrefix(ctx, "other-bot", "aaaa11"); err != nil || len(found) != 0 {
			t.Errorf("another bot's prefix search found %v, %v", ids(found), err)
		}
		for _, bad := range []string{"aa", "aaa%", "a_aa"} {
			if _, err := s.SessionsByPrefix(ctx, "bot", bad); !errors.Is(err, sqldb.ErrInvalidArgument) {
				t.Errorf("SessionsByPrefix(%q): err = %v, want sqldb.ErrInvalidArgument", bad, err)
			}
		}
	})
}

func TestMoveAndResetSession(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		from := storetest.NewConvAt(t, s, "bot", "C1", "old")
		to := storetest.NewConvAt(t, s, "bot", "C1", "new")
		const sid, fresh = "11111111-1111-1111-1111-111111111111", "22222222-2222-2222-2222-222222222222"
		if err := s.SetSessionID(ctx, from.ID, sid); err != nil {
			t.Fatal(err)
		}
		if err := s.NoteActivity(ctx, from.ID, "refactor the parser"); err != nil {
			t.Fatal(err)
		}

		if err := s.MoveSession(ctx, from.ID, to.ID, "33333333-3333-3333-3333-333333333333", fresh); !errors.Is(err, ErrSessionMoved) {
			t.Fatalf("moving a session the conversation does not have: err = %v, want ErrSessionMoved", err)
		}
		if err := s.MoveSession(ctx, from.ID, to.ID, sid, fresh); err != nil {
			t.Fatal(err)
		}
		check := func(c Conversation, wantSession, wantSummary string) {
			t.Helper()
			got, err := s.ConversationByID(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			sum, err := s.SessionSummary(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.SessionID != wantSession || sum != wantSummary {
				t.Errorf("%s: session %q summary %q, want %q %q", c.Key.Thread, got.SessionID, sum, wantSession, wantSummary)
			}
		}
		check(from, fresh, "")
		check(to, sid, "refactor the parser")
		if err := s.MoveSession(ctx, from.ID, to.ID, sid, fresh+"x"); !errors.Is(err, ErrSessionMoved) {
			t.Errorf("moving it again: err = %v, want ErrSessionMoved", err)
		}
		if err := s.MoveSession(ctx, to.ID, "no-such-conversation", sid, fresh); !errors.Is(err, sqldb.ErrNotFound) {
			t.Errorf("moving to a missing conversation: err = %v, want sqldb.ErrNotFound", err)
		}
		check(to, sid, "refactor the parser") // the failed move changed nothing

		if err := s.ResetSession(ctx, to.ID, fresh); err != nil {
			t.Fatal(err)
		}
		check(to, fresh, "")
		if err := s.ResetSession(ctx, "no-such-conversation", fresh); !errors.Is(err, sqldb.ErrNotFound) {
			t.Errorf("ResetSession of a missing conversation: err = %v", err)
		}
	})
}

func ids(ss []SessionInfo) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Key.Thread)
	}
	return out
}
