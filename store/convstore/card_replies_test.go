package convstore

import (
	"context"
	"testing"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

// TestMigration0012FindsOldCards: cards posted before migration 12 (their
// message id only inside card_ref's JSON) are found by a reply quoting them
// after the upgrade; refs that are not JSON are left alone. SQLite only:
// PostgreSQL databases begin at this release (postgres/0012 has nothing to
// fill in).
func TestMigration0012FindsOldCards(t *testing.T) {
	ctx := context.Background()
	db := kit.Empty(t, sqldb.DriverSQLite)
	old, err := kit.OpenDB(ctx, db, storetest.Migrations(t, sqldb.DriverSQLite)[:11])
	if err != nil {
		t.Fatal(err)
	}
	conv := oldConv(t, old, "phone", "15550001111@s.whatsapp.net", "")
	for _, r := range [][2]string{{"req-a", `{"Key":{"Bot":"phone"},"ID":"3EB0CARD"}`}, {"req-b", "C/1234.5678"}, {"req-c", ""}} {
		if _, err := old.db.Read().ExecContext(ctx, `INSERT INTO approvals (id, conversation_id, tool_name, card_ref, requested_at, decision, decided_at)
			VALUES (?, ?, 'Bash', ?, 1, 'allow', 2)`, r[0], conv.ID, r[1]); err != nil {
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
	a, err := s.ApprovalByCardMessage(ctx, conv.ID, "3EB0CARD")
	if err != nil || a.ID != "req-a" || a.Open() {
		t.Fatalf("old card by its message id = %+v, %v", a, err)
	}
	as, err := s.ApprovalsForConversation(ctx, conv.ID)
	if err != nil || len(as) != 3 || as[1].CardMsgID != "" || as[2].CardMsgID != "" {
		t.Fatalf("approvals after the upgrade = %+v, %v", as, err)
	}
}

// TestInboxReplyTo: the quoted message's id and text are kept with a
// ledger message.
func TestInboxReplyTo(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		conv := storetest.NewConvAt(t, s, "phone", "15550001111@s.whatsapp.net", "")
		m, _, err := s.Enqueue(ctx, InboxMessage{ConversationID: conv.ID, PlatformMsgID: "IN1", UserID: "+1555", Text: "1", ReplyTo: "3EB0CARD", Quoted: "the card"})
		if err != nil || m.ReplyTo != "3EB0CARD" || m.Quoted != "the card" {
			t.Fatalf("enqueued %+v, %v", m, err)
		}
		got, err := s.InboxByID(ctx, m.ID)
		if err != nil || got.ReplyTo != "3EB0CARD" || got.Quoted != "the card" {
			t.Fatalf("read back %+v, %v", got, err)
		}
	})
}
