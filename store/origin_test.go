package store

import (
	"context"
	"errors"
	"testing"
)

// TestInboxOrigin: a ledger message keeps its origin and schedule; an
// empty origin is a person's; an unknown origin is refused.
func TestInboxOrigin(t *testing.T) {
	ctx := context.Background()
	s := openTest(t)
	conv := newConv(t, s, "bot", "C", "T")
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
	if _, _, err := s.Enqueue(ctx, InboxMessage{ConversationID: conv.ID, PlatformMsgID: "p2", Origin: "admin"}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("unknown origin: err = %v, want ErrInvalidArgument", err)
	}
}
