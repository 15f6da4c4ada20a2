//go:build linux

package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/internal/tmpfstest"
	"github.com/agentbridge/agentbridge/store/internal/storetest"
)

// TestFullDisk: SQLite on a file system that fills up. What must not be
// lost: every message Enqueue accepted (returned nil for) — before, during
// and after the full period — and the database itself (integrity_check).
// A write that fails for want of space says so (ErrFull, IsFull,
// WriteHealth) and the same write succeeds once space returns, on the same
// Store, without reopening it.
func TestFullDisk(t *testing.T) {
	dir := tmpfstest.Mount(t, 8<<20)
	ctx := context.Background()
	path := filepath.Join(dir, "bridge.db")
	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = s.Close()
		}
	})
	conv := storetest.NewConvAt(t, s, "b", "C1", "T1")
	text := strings.Repeat("x", 16<<10) // grows the WAL quickly
	accepted := map[string]bool{}
	enqueue := func(id string) error {
		_, _, err := s.Enqueue(ctx, InboxMessage{ConversationID: conv.ID, Bot: "b", PlatformMsgID: id, UserID: "U1", Text: text})
		if err == nil {
			accepted[id] = true
		}
		return err
	}
	for i := range 5 {
		if err := enqueue(fmt.Sprintf("before-%d", i)); err != nil {
			t.Fatalf("Enqueue with space: %v", err)
		}
	}

	filler := tmpfstest.Fill(t, dir)
	var fullErr error
	for i := 0; i < 2000 && fullErr == nil; i++ { // the WAL may still have room for a few
		fullErr = enqueue(fmt.Sprintf("full-%d", i))
	}
	if fullErr == nil {
		t.Fatal("2000 writes of 16 KiB succeeded on a full file system")
	}
	t.Logf("first refused write: %v", fullErr)
	if !errors.Is(fullErr, ErrFull) || !IsFull(fullErr) {
		t.Fatalf("write on a full disk: %v; want an error wrapping ErrFull", fullErr)
	}
	h := s.WriteHealth()
	if !h.Full || h.Since.IsZero() || h.LastError == "" || h.Failures == 0 {
		t.Fatalf("WriteHealth while full = %+v; want Full with since, last error and failures", h)
	}
	// Still full: more writes fail the same way, nothing crashes, and a
	// read still works.
	for i := range 3 {
		if err := enqueue(fmt.Sprintf("still-full-%d", i)); !IsFull(err) {
			t.Fatalf("second write on a full disk: %v; want ErrFull", err)
		}
	}
	if _, err := s.PendingInbox(ctx, conv.ID); err != nil {
		t.Fatalf("read while full: %v", err)
	}

	if h := s.WriteHealth(); !h.Full { // its space probe finds no room either
		t.Fatalf("WriteHealth while still full = %+v; want Full", h)
	}

	filler.Free(t)
	// Without any write, the condition clears by itself at the next
	// space probe (due once the probe interval has passed).
	s.db.SetClock(func() time.Time { return time.Now().Add(time.Minute) })
	if h := s.WriteHealth(); h.Full {
		t.Fatalf("WriteHealth after space returned, before any write = %+v; want not full", h)
	}
	if err := enqueue("after-0"); err != nil {
		t.Fatalf("Enqueue after space returned: %v", err)
	}
	// The message refused while full is accepted now (a redelivery).
	if err := enqueue("still-full-0"); err != nil {
		t.Fatalf("Enqueue of a refused message after space returned: %v", err)
	}
	if h := s.WriteHealth(); h.Full || h.LastError != "" || h.Failures == 0 {
		t.Fatalf("WriteHealth after space returned = %+v; want not full, failures kept", h)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	closed = true

	s2, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("reopen after the full period: %v", err)
	}
	defer s2.Close()
	var check string
	if err := s2.db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q, %v; want ok", check, err)
	}
	msgs, err := s2.PendingInbox(ctx, conv.ID)
	if err != nil {
		t.Fatalf("PendingInbox: %v", err)
	}
	got := map[string]bool{}
	for _, m := range msgs {
		got[m.PlatformMsgID] = true
	}
	for id := range accepted {
		if !got[id] {
			t.Errorf("message %s was accepted (Enqueue returned nil) but is not in the ledger", id)
		}
	}
	if len(got) != len(accepted) {
		t.Errorf("ledger holds %d messages, %d were accepted: a refused write left a row", len(got), len(accepted))
	}
}
