package convstore

import (
	"context"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

func TestGrantsFlow(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		start := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
		storetest.UseClock(s.db, start, time.Second)
		a := storetest.NewConvAt(t, s, "bot", "C", "A")
		b := storetest.NewConvAt(t, s, "bot", "C", "B")

		if gs, err := s.ActiveGrants(ctx, a.ID); err != nil || len(gs) != 0 {
			t.Fatalf("ActiveGrants of a new conversation = %+v, %v", gs, err)
		}
		got, err := s.AddGrants(ctx, a.ID, []Grant{
			{Tool: "Bash", Match: "git status *", GrantedBy: "carol", ApprovalID: "req-1"},
			{Tool: "Read", GrantedBy: "carol", ApprovalID: "req-1"},
		})
		if err != nil {
			t.Fatalf("AddGrants: %v", err)
		}
		if len(got) != 2 || got[0].Num != 1 || got[1].Num != 2 || got[0].ConversationID != a.ID ||
			got[0].Tool != "Bash" || got[0].Match != "git status *" || got[0].GrantedBy != "carol" || got[0].ApprovalID != "req-1" ||
			got[0].CreatedAt.IsZero() || !got[0].Active() || got[1].Match != "" {
			t.Fatalf("stored grants = %+v", got)
		}
		// Numbers are per conversation.
		other, err := s.AddGrants(ctx, b.ID, []Grant{{Tool: "Bash", Match: "make *", GrantedBy: "dave"}})
		if err != nil || len(other) != 1 || other[0].Num != 1 {
			t.Fatalf("grant of another conversation = %+v, %v", other, err)
		}
		// The same rule again returns the active grant instead of a copy.
		again, err := s.AddGrants(ctx, a.ID, []Grant{{Tool: "Bash", Match: "git status *", GrantedBy: "dave", ApprovalID: "req-9"}})
		if err != nil || len(again) != 1 || again[0].ID != got[0].ID || again[0].GrantedBy != "carol" {
			t.Fatalf("duplicate grant = %+v, %v", again, err)
		}

		removed, err := s.RemoveGrant(ctx, a.ID, 1, "dave")
		if err != nil {
			t.Fatalf("RemoveGrant: %v", err)
		}
		if removed.Active() || removed.RemovedBy != "dave" || !removed.RemovedAt.After(removed.CreatedAt) || removed.Num != 1 {
			t.Fatalf("removed grant = %+v", removed)
		}
		_, err = s.RemoveGrant(ctx, a.ID, 1, "dave")
		storetest.WantErrIs(t, "removing a removed grant", err, sqldb.ErrNotFound)
		_, err = s.RemoveGrant(ctx, a.ID, 7, "dave")
		storetest.WantErrIs(t, "removing an unknown grant", err, sqldb.ErrNotFound)
		_, err = s.RemoveGrant(ctx, b.ID, 2, "dave")
		storetest.WantErrIs(t, "removing another conversation's number", err, sqldb.ErrNotFound)

		active, err := s.ActiveGrants(ctx, a.ID)
		if err != nil || len(active) != 1 || active[0].Num != 2 {
			t.Fatalf("ActiveGrants after removal = %+v, %v", active, err)
		}
		// A removed rule granted again gets a new number; numbers are never reused.
		re, err := s.AddGrants(ctx, a.ID, []Grant{{Tool: "Bash", Match: "git status *", GrantedBy: "erin"}})
		if err != nil || len(re) != 1 || re[0].Num != 3 || re[0].GrantedBy != "erin" {
			t.Fatalf("re-granted = %+v, %v", re, err)
		}
		all, err := s.GrantsForConversation(ctx, a.ID)
		if err != nil || len(all) != 3 || all[0].Active() || !all[1].Active() || !all[2].Active() {
			t.Fatalf("GrantsForConversation = %+v, %v", all, err)
		}
	})
}

func TestAddGrantsRejects(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		a := storetest.NewConvAt(t, s, "bot", "C", "A")
		_, err := s.AddGrants(ctx, "no-such-conversation", []Grant{{Tool: "Bash"}})
		storetest.WantErrIs(t, "unknown conversation", err, sqldb.ErrNotFound)
		_, err = s.AddGrants(ctx, a.ID, []Grant{{Tool: "Bash", Match: "ls"}, {Tool: ""}})
		storetest.WantErrIs(t, "empty tool", err, sqldb.ErrInvalidArgument)
		if gs, _ := s.GrantsForConversation(ctx, a.ID); len(gs) != 0 {
			t.Fatalf("a refused batch stored %+v", gs)
		}
	})
}

// TestGrantsSurviveReopen: grants are on disk, not in memory.
func TestGrantsSurviveReopen(t *testing.T) {
	for _, driver := range storetest.Drivers() {
		t.Run(driver, func(t *testing.T) { testGrantsSurviveReopen(t, kit.Empty(t, driver)) })
	}
}

func testGrantsSurviveReopen(t *testing.T, db storetest.DB) {
	ctx := context.Background()
	s, err := kit.OpenDB(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	conv := storetest.NewConvAt(t, s, "bot", "C", "T")
	if _, err := s.AddGrants(ctx, conv.ID, []Grant{{Tool: "Bash", Match: "make test", GrantedBy: "carol"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = kit.OpenDB(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.db.Close()
	gs, err := s.ActiveGrants(ctx, conv.ID)
	if err != nil || len(gs) != 1 || gs[0].Match != "make test" {
		t.Fatalf("grants after reopen = %+v, %v", gs, err)
	}
}

func TestIsParticipant(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		a := storetest.NewConvAt(t, s, "bot", "C", "A")
		b := storetest.NewConvAt(t, s, "bot", "C", "B")
		add := func(conv Conversation, msgID, user, text string) InboxMessage {
			t.Helper()
			m, _, err := s.Enqueue(ctx, InboxMessage{ConversationID: conv.ID, PlatformMsgID: msgID, UserID: user, Text: text})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		add(a, "m1", "alice", "hello")
		help := add(a, "m2", "bob", "!help")
		if err := s.MarkInbox(ctx, help.ID, InboxCompleted, NoteCommand); err != nil {
			t.Fatal(err)
		}
		stop := add(a, "m3", "bob", "!stop")
		add(b, "m4", "carol", "hi")
		tests := []struct {
			conv   Conversation
			user   string
			except string
			want   bool
		}{
			{a, "alice", stop.ID, true},  // wrote a message here
			{a, "bob", stop.ID, false},   // only commands, and the one being handled
			{a, "bob", "", true},         // the !stop itself counts unless excluded
			{a, "carol", stop.ID, false}, // wrote elsewhere
			{b, "carol", "", true},
			{a, "", "", false},
		}
		for _, tt := range tests {
			got, err := s.IsParticipant(ctx, tt.conv.ID, tt.user, tt.except)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("IsParticipant(%s, %q, except %s) = %v, want %v", tt.conv.Key.Thread, tt.user, tt.except, got, tt.want)
			}
		}
	})
}
