package webstore

import (
	"context"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/convstore"
	"github.com/agentbridge/agentbridge/store/internal/storetest"
	"github.com/agentbridge/agentbridge/store/sqldb"
)

func TestWebMessages(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		key := convstore.ConversationKey{Bot: "console", Channel: "ana", Thread: "t1"}
		other := convstore.ConversationKey{Bot: "console", Channel: "ana", Thread: "t2"}

		u, err := s.AddWebMessage(ctx, WebMessage{ID: "m1", Key: key, Author: "ana", Text: "hello", Files: []byte(`[{"ID":"f1"}]`)})
		if err != nil {
			t.Fatal(err)
		}
		if u.Seq == 0 || u.Version == 0 || u.CreatedAt.IsZero() || string(u.Files) != `[{"ID":"f1"}]` {
			t.Fatalf("added = %+v", u)
		}
		b, err := s.AddWebMessage(ctx, WebMessage{ID: "m2", Key: key, Text: "card", CardID: "c1", Buttons: []byte(`[1]`)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddWebMessage(ctx, WebMessage{ID: "m3", Key: other, Author: "ana", Text: "elsewhere"}); err != nil {
			t.Fatal(err)
		}
		_, err = s.AddWebMessage(ctx, WebMessage{ID: "m1", Key: key, Text: "again"})
		storetest.WantErrIs(t, "duplicate id", err, sqldb.ErrDuplicate)
		_, err = s.AddWebMessage(ctx, WebMessage{ID: "m9", Key: convstore.ConversationKey{Bot: "console"}, Text: "x"})
		storetest.WantErrIs(t, "no key", err, sqldb.ErrInvalidArgument)

		// An edit replaces text and buttons in place and bumps the version past
		// every earlier one.
		e, err := s.EditWebMessage(ctx, key, "m2", "card decided", "c1", nil)
		if err != nil {
			t.Fatal(err)
		}
		if e.Seq != b.Seq || e.Version <= b.Version || e.Text != "card decided" || e.Buttons != nil {
			t.Fatalf("edited = %+v (was %+v)", e, b)
		}
		_, err = s.EditWebMessage(ctx, other, "m2", "x", "", nil)
		storetest.WantErrIs(t, "edit through another conversation", err, sqldb.ErrNotFound)

		all, err := s.WebMessages(ctx, key, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 2 || all[0].ID != "m1" || all[1].ID != "m2" || all[1].Text != "card decided" {
			t.Fatalf("all = %+v", all)
		}
		since, err := s.WebMessages(ctx, key, u.Version, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(since) != 1 || since[0].ID != "m2" {
			t.Fatalf("after version %d = %+v", u.Version, since)
		}
		last, err := s.WebMessages(ctx, key, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(last) != 1 || last[0].ID != "m2" {
			t.Fatalf("last 1 = %+v", last)
		}

		threads, err := s.WebThreads(ctx, "console", "ana", WebThreadQuery{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(threads) != 2 {
			t.Fatalf("threads = %+v", threads)
		}
		byThread := map[string]WebThread{}
		for _, th := range threads {
			byThread[th.Thread] = th
		}
		if th := byThread["t1"]; th.Title != "hello" || th.Messages != 2 {
			t.Errorf("t1 = %+v", th)
		}
		if th, _ := s.WebThreads(ctx, "console", "bob", WebThreadQuery{Limit: 10}); len(th) != 0 {
			t.Errorf("bob sees %+v", th)
		}
	})
}

func TestWebUploadsAndPrune(t *testing.T) {
	kit.Each(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		clk := storetest.UseClock(s.db, start, time.Minute)
		key := convstore.ConversationKey{Bot: "console", Channel: "ana", Thread: "t1"}
		if err := s.AddWebUpload(ctx, WebUpload{ID: "f1", Key: key, Name: "a.png", MimeType: "image/png", Data: []byte{1, 2, 3}}); err != nil {
			t.Fatal(err)
		}
		got, err := s.WebUpload(ctx, "f1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Key != key || got.MimeType != "image/png" || len(got.Data) != 3 {
			t.Fatalf("upload = %+v", got)
		}
		_, err = s.WebUpload(ctx, "nope")
		storetest.WantErrIs(t, "missing upload", err, sqldb.ErrNotFound)
		if _, err := s.AddWebMessage(ctx, WebMessage{ID: "old", Key: key, Author: "ana", Text: "old"}); err != nil {
			t.Fatal(err)
		}
		cut := clk.Now()
		if _, err := s.AddWebMessage(ctx, WebMessage{ID: "new", Key: key, Author: "ana", Text: "new"}); err != nil {
			t.Fatal(err)
		}
		n, err := Prune(ctx, s.db, cut.UnixMilli(), 500)
		if err != nil {
			t.Fatal(err)
		}
		if n != 2 {
			t.Errorf("pruned web rows = %d, want 2 (old message, upload)", n)
		}
		msgs, err := s.WebMessages(ctx, key, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 1 || msgs[0].ID != "new" {
			t.Errorf("left = %+v", msgs)
		}
	})
}
