package delivery

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store"
)

// TestJournalKeepsOrderWhileFull: a write the database refuses for want of
// space is kept, and so is every later write, even one the database could
// take, so that they are made in the order they happened; the kept marks
// are known (Waits); retries back off up to unrecordedMaxRetry; once the
// database takes them, they are made oldest first and Retry reports it.
func TestJournalKeepsOrderWhileFull(t *testing.T) {
	ctx := context.Background()
	var armed []time.Duration
	j := NewJournal(slog.New(slog.DiscardHandler), func(d time.Duration) { armed = append(armed, d) })
	full := true
	var made []string
	write := func(name, mark string) Write {
		return Write{What: name, MarkID: mark, Do: func(context.Context) error {
			if full {
				return store.ErrFull
			}
			made = append(made, name)
			return nil
		}}
	}
	if kept, err := j.Record(ctx, write("first", "m1")); !kept || err != nil {
		t.Fatalf("a write refused for want of space: kept=%v err=%v", kept, err)
	}
	full = false
	if kept, err := j.Record(ctx, write("second", "m2")); !kept || err != nil {
		t.Fatalf("a write behind a kept one: kept=%v err=%v, want kept", kept, err)
	}
	if len(made) != 0 || j.Len() != 2 || !j.Waits("m1") || !j.Waits("m2") || j.Waits("m3") {
		t.Fatalf("made %v, %d kept; Waits m1=%v m2=%v m3=%v", made, j.Len(), j.Waits("m1"), j.Waits("m2"), j.Waits("m3"))
	}
	if !slices.Equal(armed, []time.Duration{unrecordedFirstRetry}) {
		t.Fatalf("retries armed %v, want one after %v", armed, unrecordedFirstRetry)
	}
	full = true
	for range 6 {
		if j.Retry(ctx) {
			t.Fatal("Retry reported done while the disk is still full")
		}
	}
	if want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 15 * time.Second, 15 * time.Second, 15 * time.Second}; !slices.Equal(armed, want) {
		t.Errorf("retries armed %v, want %v", armed, want)
	}
	full = false
	if !j.Retry(ctx) {
		t.Fatal("Retry did not report done once the disk had room")
	}
	if !slices.Equal(made, []string{"first", "second"}) || j.Len() != 0 || j.Waits("m1") {
		t.Errorf("made %v with %d kept, want first then second and none kept", made, j.Len())
	}
	if kept, err := j.Record(ctx, write("third", "")); kept || err != nil || made[len(made)-1] != "third" {
		t.Errorf("a write with nothing kept: kept=%v err=%v made=%v, want it made at once", kept, err, made)
	}
}

// TestJournalOtherErrors: an error that is not a full disk is returned at
// once, and a kept write failing for such a reason on retry is dropped,
// not retried forever.
func TestJournalOtherErrors(t *testing.T) {
	ctx := context.Background()
	j := NewJournal(slog.New(slog.DiscardHandler), func(time.Duration) {})
	broken := errors.New("constraint failed")
	if kept, err := j.Record(ctx, Write{What: "x", Do: func(context.Context) error { return broken }}); kept || !errors.Is(err, broken) {
		t.Fatalf("kept=%v err=%v, want the error back", kept, err)
	}
	calls := 0
	fail := store.ErrFull
	if kept, _ := j.Record(ctx, Write{What: "y", Do: func(context.Context) error { calls++; return fail }}); !kept {
		t.Fatal("not kept")
	}
	fail = broken
	if !j.Retry(ctx) || j.Len() != 0 || calls != 2 {
		t.Errorf("after a failing retry: done, %d kept, %d calls; want dropped after 2 calls", j.Len(), calls)
	}
}
