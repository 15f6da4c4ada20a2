package store

import (
	"context"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
)

// TestFeedbackPerAnswerAndPerson: a rating is kept per answer and person,
// a second click replaces the first (changed only when it differs), the
// operator view lists the latest first with their conversation, bad
// arguments are refused, and prune removes old ratings.
func TestFeedbackPerAnswerAndPerson(t *testing.T) { kit.Each(t, testFeedbackPerAnswerAndPerson) }

func testFeedbackPerAnswerAndPerson(t *testing.T, s *Store) {
	ctx := context.Background()
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	storetest.UseClock(s.db, start, time.Second)
	conv := storetest.NewConvAt(t, s, "slackbot", "C1", "1700.1")
	rate := func(reply, user string, r Rating) bool {
		t.Helper()
		changed, err := s.RecordFeedback(ctx, Feedback{ReplyID: reply, ConversationID: conv.ID, UserID: user, Rating: r})
		if err != nil {
			t.Fatalf("RecordFeedback(%s, %s, %s): %v", reply, user, r, err)
		}
		return changed
	}
	if !rate("r1", "U1", RatingGood) || rate("r1", "U1", RatingGood) || !rate("r1", "U1", RatingBad) || !rate("r1", "U2", RatingGood) || !rate("r2", "U1", RatingGood) {
		t.Fatal("changed flags wrong: want true for a new or different rating, false for the same again")
	}
	got, err := s.RecentFeedback(ctx, 10)
	if err != nil || len(got) != 3 {
		t.Fatalf("RecentFeedback = %+v, %v; want 3 rows", got, err)
	}
	if got[0].ReplyID != "r2" || got[2].ReplyID != "r1" || got[2].UserID != "U1" || got[2].Rating != RatingBad ||
		got[0].Key != (ConversationKey{Bot: "slackbot", Channel: "C1", Thread: "1700.1"}) {
		t.Errorf("RecentFeedback order or content = %+v", got)
	}
	for _, bad := range []Feedback{
		{ReplyID: "r1", ConversationID: conv.ID, UserID: "U1", Rating: "meh"},
		{ReplyID: "", ConversationID: conv.ID, UserID: "U1", Rating: RatingGood},
		{ReplyID: "r1", ConversationID: conv.ID, UserID: "", Rating: RatingGood},
	} {
		if _, err := s.RecordFeedback(ctx, bad); err == nil {
			t.Errorf("RecordFeedback(%+v) accepted", bad)
		}
	}
	if _, err := s.RecordFeedback(ctx, Feedback{ReplyID: "r9", ConversationID: "no-such-conversation", UserID: "U1", Rating: RatingGood}); err == nil {
		t.Error("feedback for an unknown conversation accepted")
	}
	c, err := s.Prune(ctx, start.Add(time.Hour))
	if err != nil || c.Feedback != 3 {
		t.Fatalf("Prune = %+v, %v; want 3 ratings deleted", c, err)
	}
}
