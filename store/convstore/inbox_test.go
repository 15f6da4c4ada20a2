package convstore

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
	"github.com/google/uuid"
)

func TestEnqueueDedupeConcurrent(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		conv := storetest.NewConvAt(t, s, "bot", "C", "T")

		const same = 16 // callers racing with the same (bot, msg id)
		const distinct = 16
		type result struct {
			msg InboxMessage
			dup bool
			err error
		}
		sameRes := make([]result, same)
		distinctRes := make([]result, distinct)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range same {
			wg.Go(func() {
				<-start
				m, dup, err := s.Enqueue(ctx, InboxMessage{ConversationID: conv.ID, PlatformMsgID: "dup", Text: fmt.Sprint("copy ", i)})
				sameRes[i] = result{m, dup, err}
			})
		}
		for i := range distinct {
			wg.Go(func() {
				<-start
				m, dup, err := s.Enqueue(ctx, InboxMessage{ConversationID: conv.ID, PlatformMsgID: fmt.Sprint("m", i)})
				distinctRes[i] = result{m, dup, err}
			})
		}
		close(start)
		wg.Wait()

		firsts := 0
		for i, r := range sameRes {
			if r.err != nil {
				t.Fatalf("same-key caller %d: %v", i, r.err)
			}
			if !r.dup {
				firsts++
			}
			if r.msg.ID != sameRes[0].msg.ID || r.msg.Text != sameRes[0].msg.Text {
				t.Fatalf("same-key caller %d got %s %q, caller 0 got %s %q", i, r.msg.ID, r.msg.Text, sameRes[0].msg.ID, sameRes[0].msg.Text)
			}
		}
		if firsts != 1 {
			t.Fatalf("%d same-key callers saw duplicate=false, want exactly 1", firsts)
		}
		for i, r := range distinctRes {
			if r.err != nil || r.dup {
				t.Fatalf("distinct caller %d: dup=%v err=%v", i, r.dup, r.err)
			}
		}
		if n := storetest.CountRows(t, s.db.Read(), "SELECT COUNT(*) FROM inbox"); n != distinct+1 {
			t.Fatalf("%d inbox rows, want %d", n, distinct+1)
		}
		if n := storetest.CountRows(t, s.db.Read(), "SELECT COUNT(*) FROM (SELECT 1 FROM inbox GROUP BY bot, platform_msg_id HAVING COUNT(*) > 1) AS dup"); n != 0 {
			t.Fatalf("%d keys stored more than once", n)
		}
	})
}

func TestEnqueue(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
		storetest.UseClock(s.db, now, 0)
		conv := storetest.NewConvAt(t, s, "bot", "C", "T")
		files := []byte(`[{"name":"a.png","url":"https://example.invalid/a.png"}]`)

		m, dup, err := s.Enqueue(ctx, InboxMessage{
			ConversationID: conv.ID, PlatformMsgID: "p1", UserID: "U1", UserName: "alice", Text: "hello", Files: files,
			State: InboxCompleted, Attempts: 7, Error: "ignored", // set by the store, not the caller
		})
		if err != nil || dup {
			t.Fatalf("Enqueue: dup=%v err=%v", dup, err)
		}
		if _, err := uuid.Parse(m.ID); err != nil {
			t.Fatalf("id %q is not a uuid", m.ID)
		}
		want := InboxMessage{
			ID: m.ID, ConversationID: conv.ID, Bot: "bot", PlatformMsgID: "p1", UserID: "U1", UserName: "alice",
			Text: "hello", Files: files, State: InboxPending, CreatedAt: now, UpdatedAt: now, Origin: OriginPerson,
		}
		if !equalInbox(m, want) {
			t.Fatalf("Enqueue returned %+v, want %+v", m, want)
		}
		got, err := s.InboxByID(ctx, m.ID)
		if err != nil || !equalInbox(got, want) {
			t.Fatalf("InboxByID = %+v, %v; want %+v", got, err, want)
		}

		// A duplicate returns the stored message, not the new content.
		again, dup, err := s.Enqueue(ctx, InboxMessage{ConversationID: conv.ID, Bot: "bot", PlatformMsgID: "p1", Text: "edited"})
		if err != nil || !dup || !equalInbox(again, want) {
			t.Fatalf("duplicate Enqueue = %+v dup=%v err=%v", again, dup, err)
		}

		// The same platform message id under another bot is a different message.
		other := storetest.NewConvAt(t, s, "other-bot", "C", "T")
		if _, dup, err := s.Enqueue(ctx, InboxMessage{ConversationID: other.ID, PlatformMsgID: "p1"}); err != nil || dup {
			t.Fatalf("same msg id, other bot: dup=%v err=%v", dup, err)
		}

		// A caller-chosen uuid is kept.
		id := uuid.NewString()
		if m, _, err := s.Enqueue(ctx, InboxMessage{ID: id, ConversationID: conv.ID, PlatformMsgID: "p2"}); err != nil || m.ID != id || m.Files != nil {
			t.Fatalf("preset id: %+v, %v", m, err)
		}
		_, err = s.InboxByID(ctx, uuid.NewString())
		storetest.WantErrIs(t, "InboxByID unknown", err, sqldb.ErrNotFound)
	})
}

func TestEnqueueInvalid(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		conv := storetest.NewConvAt(t, s, "bot", "C", "T")
		existing := enqueue(t, s, conv, "p0")
		tests := []struct {
			name string
			msg  InboxMessage
			want error
		}{
			{"no conversation", InboxMessage{PlatformMsgID: "p"}, sqldb.ErrInvalidArgument},
			{"no platform id", InboxMessage{ConversationID: conv.ID}, sqldb.ErrInvalidArgument},
			{"unknown conversation", InboxMessage{ConversationID: "nope", PlatformMsgID: "p"}, sqldb.ErrNotFound},
			{"other bot", InboxMessage{ConversationID: conv.ID, Bot: "intruder", PlatformMsgID: "p"}, sqldb.ErrInvalidArgument},
			{"id not a uuid", InboxMessage{ID: "x", ConversationID: conv.ID, PlatformMsgID: "p"}, sqldb.ErrInvalidArgument},
			{"id taken", InboxMessage{ID: existing.ID, ConversationID: conv.ID, PlatformMsgID: "p"}, sqldb.ErrDuplicate},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, _, err := s.Enqueue(context.Background(), tt.msg)
				storetest.WantErrIs(t, "Enqueue", err, tt.want)
			})
		}
		if n := storetest.CountRows(t, s.db.Read(), "SELECT COUNT(*) FROM inbox"); n != 1 {
			t.Fatalf("%d inbox rows after refused enqueues, want 1", n)
		}
	})
}

func equalInbox(a, b InboxMessage) bool {
	fa, fb := a.Files, b.Files
	a.Files, b.Files = nil, nil
	return reflect.DeepEqual(a, b) && bytes.Equal(fa, fb)
}

var allInboxStates = []InboxState{InboxPending, InboxSent, InboxStarted, InboxCompleted, InboxCancelled, InboxFailed}

// allowedMoves lists, independently of the implementation, every move
// MarkInbox accepts. Same-state moves are no-ops.
var allowedMoves = map[[2]InboxState]bool{
	{InboxPending, InboxPending}:     true,
	{InboxPending, InboxSent}:        true,
	{InboxPending, InboxStarted}:     true,
	{InboxPending, InboxCompleted}:   true,
	{InboxPending, InboxCancelled}:   true,
	{InboxPending, InboxFailed}:      true,
	{InboxSent, InboxSent}:           true,
	{InboxSent, InboxStarted}:        true,
	{InboxSent, InboxCompleted}:      true,
	{InboxSent, InboxCancelled}:      true,
	{InboxSent, InboxFailed}:         true,
	{InboxStarted, InboxStarted}:     true,
	{InboxStarted, InboxCompleted}:   true,
	{InboxStarted, InboxCancelled}:   true,
	{InboxStarted, InboxFailed}:      true,
	{InboxCompleted, InboxCompleted}: true,
	{InboxCancelled, InboxCancelled}: true,
	{InboxFailed, InboxFailed}:       true,
}

func TestMarkInboxTransitions(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		conv := storetest.NewConvAt(t, s, "bot", "C", "T")
		for _, from := range allInboxStates {
			for _, to := range allInboxStates {
				allowed := allowedMoves[[2]InboxState{from, to}]
				t.Run(fmt.Sprintf("%s to %s", from, to), func(t *testing.T) {
					m := enqueue(t, s, conv, fmt.Sprintf("%s-%s", from, to))
					if from != InboxPending {
						if err := s.MarkInbox(ctx, m.ID, from, "setup"); err != nil {
							t.Fatalf("setup pending → %s: %v", from, err)
						}
					}
					if got := from.CanMoveTo(to); got != allowed {
						t.Errorf("CanMoveTo = %v, want %v", got, allowed)
					}
					err := s.MarkInbox(ctx, m.ID, to, "reason")
					got, gerr := s.InboxByID(ctx, m.ID)
					if gerr != nil {
						t.Fatal(gerr)
					}
					switch {
					case allowed && err != nil:
						t.Fatalf("MarkInbox refused: %v", err)
					case !allowed:
						storetest.WantErrIs(t, "MarkInbox", err, ErrBadTransition)
						if got.State != from {
							t.Fatalf("refused move changed state to %s", got.State)
						}
					case got.State != to:
						t.Fatalf("state = %s, want %s", got.State, to)
					}
					wantErr := "reason"
					if from == to || !allowed {
						wantErr = "setup" // unchanged
						if from == InboxPending {
							wantErr = ""
						}
					}
					if got.Error != wantErr {
						t.Fatalf("error text = %q, want %q", got.Error, wantErr)
					}
				})
			}
		}
	})
}

func TestMarkInboxInvalid(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		m := enqueue(t, s, storetest.NewConvAt(t, s, "bot", "C", "T"), "p")
		storetest.WantErrIs(t, "unknown state", s.MarkInbox(ctx, m.ID, "delivered", ""), sqldb.ErrInvalidArgument)
		storetest.WantErrIs(t, "empty state", s.MarkInbox(ctx, m.ID, "", ""), sqldb.ErrInvalidArgument)
		storetest.WantErrIs(t, "unknown id", s.MarkInbox(ctx, uuid.NewString(), InboxSent, ""), sqldb.ErrNotFound)
		if InboxState("delivered").CanMoveTo(InboxSent) || InboxPending.CanMoveTo("delivered") {
			t.Fatal("CanMoveTo accepts unknown states")
		}
	})
}

func TestResetForRedelivery(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		a := storetest.NewConvAt(t, s, "bot", "C", "A")
		b := storetest.NewConvAt(t, s, "bot", "C", "B")
		c := storetest.NewConvAt(t, s, "bot", "C", "C")
		msgs := map[InboxState]InboxMessage{}
		var order []string // enqueue order of a's messages
		for _, st := range allInboxStates {
			m := enqueue(t, s, a, "a-"+string(st))
			if st != InboxPending {
				if err := s.MarkInbox(ctx, m.ID, st, ""); err != nil {
					t.Fatal(err)
				}
			}
			msgs[st] = m
			order = append(order, m.ID)
		}
		bSent := enqueue(t, s, b, "b-1")
		if err := s.MarkInbox(ctx, bSent.ID, InboxSent, ""); err != nil {
			t.Fatal(err)
		}
		cDone := enqueue(t, s, c, "c-1")
		if err := s.MarkInbox(ctx, cDone.ID, InboxCompleted, ""); err != nil {
			t.Fatal(err)
		}

		ids := func(ms []InboxMessage) []string {
			var out []string
			for _, m := range ms {
				out = append(out, m.ID)
			}
			return out
		}
		undelivered, err := s.UndeliveredInbox(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if want := order[:3]; fmt.Sprint(ids(undelivered)) != fmt.Sprint(want) {
			t.Fatalf("UndeliveredInbox = %v, want %v (pending, sent, started in order)", ids(undelivered), want)
		}
		convs, err := s.ConversationsWithUndelivered(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(convs) != fmt.Sprint([]string{a.ID, b.ID}) {
			t.Fatalf("ConversationsWithUndelivered = %v, want [a b]", convs)
		}

		n, err := s.ResetForRedelivery(ctx, a.ID)
		if err != nil || n != 2 {
			t.Fatalf("ResetForRedelivery = %d, %v; want 2", n, err)
		}
		wantAfter := map[InboxState]struct {
			state    InboxState
			attempts int
		}{
			InboxPending:   {InboxPending, 0},
			InboxSent:      {InboxPending, 1},
			InboxStarted:   {InboxPending, 1},
			InboxCompleted: {InboxCompleted, 0},
			InboxCancelled: {InboxCancelled, 0},
			InboxFailed:    {InboxFailed, 0},
		}
		for st, want := range wantAfter {
			got, err := s.InboxByID(ctx, msgs[st].ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != want.state || got.Attempts != want.attempts {
				t.Errorf("message that was %s: now %s attempts %d, want %s attempts %d", st, got.State, got.Attempts, want.state, want.attempts)
			}
		}
		if got, _ := s.InboxByID(ctx, bSent.ID); got.State != InboxSent || got.Attempts != 0 {
			t.Errorf("other conversation touched: %s attempts %d", got.State, got.Attempts)
		}
		pending, err := s.PendingInbox(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(ids(pending)) != fmt.Sprint(order[:3]) {
			t.Fatalf("PendingInbox after reset = %v, want %v (original order)", ids(pending), order[:3])
		}

		// A redelivered message goes through the machine again; a second crash
		// counts a second attempt.
		if err := s.MarkInbox(ctx, msgs[InboxSent].ID, InboxStarted, ""); err != nil {
			t.Fatal(err)
		}
		if n, err := s.ResetForRedelivery(ctx, a.ID); err != nil || n != 1 {
			t.Fatalf("second reset = %d, %v; want 1", n, err)
		}
		if got, _ := s.InboxByID(ctx, msgs[InboxSent].ID); got.Attempts != 2 || got.State != InboxPending {
			t.Fatalf("after second reset: %s attempts %d, want pending 2", got.State, got.Attempts)
		}
		if n, err := s.ResetForRedelivery(ctx, "unknown"); err != nil || n != 0 {
			t.Fatalf("reset unknown conversation = %d, %v", n, err)
		}

		for _, id := range order[:3] {
			if err := s.MarkInbox(ctx, id, InboxCompleted, ""); err != nil {
				t.Fatal(err)
			}
		}
		convs, err = s.ConversationsWithUndelivered(ctx)
		if err != nil || fmt.Sprint(convs) != fmt.Sprint([]string{b.ID}) {
			t.Fatalf("ConversationsWithUndelivered after completion = %v, %v; want [b]", convs, err)
		}
	})
}

func TestPendingInboxOrderWithinOneMillisecond(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		storetest.UseClock(s.db, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 0) // every row gets the same timestamp
		conv := storetest.NewConvAt(t, s, "bot", "C", "T")
		var want []string
		for i := range 40 {
			want = append(want, enqueue(t, s, conv, fmt.Sprint("m", i)).ID)
		}
		pending, err := s.PendingInbox(ctx, conv.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(pending) != len(want) {
			t.Fatalf("%d pending, want %d", len(pending), len(want))
		}
		for i := range want {
			if pending[i].ID != want[i] {
				t.Fatalf("pending[%d] = %s, want %s", i, pending[i].ID, want[i])
			}
		}
		if got, err := s.PendingInbox(ctx, "unknown"); err != nil || len(got) != 0 {
			t.Fatalf("PendingInbox unknown = %v, %v", got, err)
		}
	})
}

// Two bots may receive the same platform message id: each Enqueue, first or duplicate, returns its own
// bot's message, never the other bot's (the read-back is keyed by bot and message id).
func TestEnqueueSameMsgIDOtherBot(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		a := storetest.NewConvAt(t, s, "bot-a", "C", "T")
		b := storetest.NewConvAt(t, s, "bot-b", "C", "T")
		enqueue := func(conv Conversation, text string) (InboxMessage, bool) {
			t.Helper()
			m, dup, err := s.Enqueue(ctx, InboxMessage{ConversationID: conv.ID, PlatformMsgID: "p1", Text: text})
			if err != nil {
				t.Fatalf("Enqueue %s: %v", conv.Key.Bot, err)
			}
			return m, dup
		}
		ma, dup := enqueue(a, "to a")
		if dup || ma.Bot != "bot-a" || ma.Text != "to a" {
			t.Fatalf("bot-a first: %+v dup=%v", ma, dup)
		}
		mb, dup := enqueue(b, "to b")
		if dup || mb.ID == ma.ID || mb.Bot != "bot-b" || mb.ConversationID != b.ID || mb.Text != "to b" {
			t.Fatalf("bot-b, same msg id: %+v dup=%v; want its own new message (bot-a's is %s)", mb, dup, ma.ID)
		}
		// Duplicates in both orders, so a read-back that picks either row regardless of bot is caught.
		for _, c := range []struct {
			conv Conversation
			want InboxMessage
		}{{a, ma}, {b, mb}} {
			got, dup := enqueue(c.conv, "again")
			if !dup || got.ID != c.want.ID || got.Bot != c.want.Bot || got.Text != c.want.Text {
				t.Fatalf("duplicate for %s = %+v dup=%v; want %+v", c.want.Bot, got, dup, c.want)
			}
		}
	})
}

// TestEnqueueReturnsWhatIsStored: the message Enqueue returns for a new
// entry (built without reading it back) is the one the ledger holds, for
// every kind of field, with and without files.
func TestEnqueueReturnsWhatIsStored(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		conv := storetest.NewConvAt(t, s, "bot", "C", "T")
		for i, in := range []InboxMessage{
			{PlatformMsgID: "plain", Text: "hello"},
			{PlatformMsgID: "full", UserID: "U1", UserName: "Ann", Text: "héllo\nwörld", Files: []byte(`[{"name":"a.png"}]`),
				Origin: OriginSchedule, ScheduleID: 7, ReplyTo: "1.2", Quoted: "the card"},
			{PlatformMsgID: "empty files", Files: []byte{}},
			{ID: uuid.NewString(), PlatformMsgID: "preset id", Bot: "bot"},
		} {
			in.ConversationID = conv.ID
			got, dup, err := s.Enqueue(ctx, in)
			if err != nil || dup {
				t.Fatalf("%d: Enqueue: dup %v, %v", i, dup, err)
			}
			stored, err := s.InboxByID(ctx, got.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(stored.Files) == 0 && len(got.Files) == 0 {
				stored.Files, got.Files = nil, nil // an empty blob may read back as NULL
			}
			if !reflect.DeepEqual(got, stored) {
				t.Errorf("%d: Enqueue returned\n%+v\nthe ledger holds\n%+v", i, got, stored)
			}
		}
	})
}
