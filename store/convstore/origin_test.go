package convstore

import (
	"context"
	"errors"
	"testing"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
	"github.com/google/uuid"
)

// TestInboxOrigin: a ledger message keeps its origin and schedule; an
// empty origin is a person's; an unknown origin is refused.
func TestInboxOrigin(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		conv := storetest.NewConvAt(t, s, "bot", "C", "T")
		person, _, err := s.Enqueue(ctx, InboxMessage{ConversationID: conv.ID, PlatformMsgID: "p1", UserID: "U1", Text: "!mode plan"})
		if err != nil || person.Origin != OriginPerson || person.ScheduleID != 0 {
			t.Fatalf("person message = %+v, %v", person, err)
		}
		fired, _, err := s.Enqueue(ctx, InboxMessage{ConversationID: conv.ID, PlatformMsgID: "schedule-7-100", Text: "!mode plan",
			Origin: OriginSchedule, ScheduleID: 7})
		if err != nil {
			t.Fatal(err)
		}
		back, err := s.InboxByID(ctx, fired.ID)
		if err != nil || back.Origin != OriginSchedule || back.ScheduleID != 7 || back.UserID != "" {
			t.Fatalf("read back %+v, %v", back, err)
		}
		if _, _, err := s.Enqueue(ctx, InboxMessage{ConversationID: conv.ID, PlatformMsgID: "p2", Origin: "admin"}); !errors.Is(err, sqldb.ErrInvalidArgument) {
			t.Errorf("unknown origin: err = %v, want sqldb.ErrInvalidArgument", err)
		}
		// The run of a schedule U2 made does not make U2 a participant.
		if _, _, err := s.Enqueue(ctx, InboxMessage{ConversationID: conv.ID, PlatformMsgID: "schedule-8-100", UserID: "U2", Text: "x",
			Origin: OriginSchedule, ScheduleID: 8}); err != nil {
			t.Fatal(err)
		}
		for user, want := range map[string]bool{"U1": true, "U2": false} {
			if ok, err := s.IsParticipant(ctx, conv.ID, user, ""); err != nil || ok != want {
				t.Errorf("IsParticipant(%s) = %v, %v; want %v", user, ok, err, want)
			}
		}
	})
}

// TestMigration0010MarksScheduledRuns: ledger messages a schedule's firing
// recorded before migration 10 become OriginSchedule (a pending one must
// not run as a command after the upgrade), with the placeholder author
// "schedule" cleared; people's messages become OriginPerson.
func TestMigration0010MarksScheduledRuns(t *testing.T) {
	for _, driver := range storetest.Drivers() {
		t.Run(driver, func(t *testing.T) { testMigration0010MarksScheduledRuns(t, kit.Empty(t, driver)) })
	}
}

func testMigration0010MarksScheduledRuns(t *testing.T, db storetest.DB) {
	ctx := context.Background()
	old, err := kit.OpenDB(ctx, db, storetest.Migrations(t, db.Driver)[:8])
	if err != nil {
		t.Fatal(err)
	}
	conv := oldConv(t, old, "team", "C1", "t1")
	for _, r := range [][2]string{{"schedule-3-1767600000", "schedule"}, {"schedule-4-1767600000", "U1"}, {"1767600000.000100", "U2"}} {
		if _, err := old.db.Read().ExecContext(ctx, `INSERT INTO inbox (id, conversation_id, bot, platform_msg_id, user_id, user_name, text, state, created_at, updated_at)
			VALUES (?, ?, 'team', ?, ?, '', '!mode acceptEdits', 'pending', 1, 1)`, uuid.NewString(), conv.ID, r[0], r[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := kit.OpenDB(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.db.Close()
	msgs, err := s.PendingInbox(ctx, conv.ID)
	if err != nil || len(msgs) != 3 {
		t.Fatalf("pending = %+v, %v", msgs, err)
	}
	want := map[string][2]string{"schedule-3-1767600000": {"schedule", ""}, "schedule-4-1767600000": {"schedule", "U1"},
		"1767600000.000100": {"person", "U2"}}
	for _, m := range msgs {
		if w := want[m.PlatformMsgID]; string(m.Origin) != w[0] || m.UserID != w[1] {
			t.Errorf("%s: origin %q user %q, want %q %q", m.PlatformMsgID, m.Origin, m.UserID, w[0], w[1])
		}
	}
}
