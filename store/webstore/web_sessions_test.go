package webstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/store/sqldb"
)

// TestWebSessions: a session is found by id until deleted; a user keeps
// at most keepPerUser sessions (the oldest go); expired sessions go when
// a new one is added; KeepWebSessions ends the sessions of removed users
// and of changed tokens only.
func TestWebSessions(t *testing.T) {
	ctx := context.Background()
	kit.Each(t, func(t *testing.T, s *Store) {
		t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		add := func(id, user, fp string, created time.Time, life time.Duration) {
			t.Helper()
			ws := WebSession{ID: []byte(id), User: user, TokenFP: []byte(fp), Created: created, Expires: created.Add(life)}
			if err := s.AddWebSession(ctx, ws, 3); err != nil {
				t.Fatal(err)
			}
		}
		has := func(id string) bool {
			t.Helper()
			_, err := s.WebSession(ctx, []byte(id))
			if err != nil && !errors.Is(err, sqldb.ErrNotFound) {
				t.Fatal(err)
			}
			return err == nil
		}

		add("short", "bob", "b1", t0, time.Hour)
		for i := range 5 {
			add(fmt.Sprintf("ana-%d", i), "ana", "a1", t0.Add(time.Duration(i)*time.Minute), 24*time.Hour)
		}
		got, err := s.WebSession(ctx, []byte("ana-4"))
		if err != nil || got.User != "ana" || !bytes.Equal(got.TokenFP, []byte("a1")) || !got.Expires.Equal(t0.Add(4*time.Minute+24*time.Hour)) {
			t.Fatalf("WebSession(ana-4) = %+v, %v", got, err)
		}
		for id, want := range map[string]bool{"ana-0": false, "ana-1": false, "ana-2": true, "ana-3": true, "ana-4": true, "short": true} {
			if has(id) != want {
				t.Errorf("after 5 sessions of ana (keep 3): %s present %v, want %v", id, !want, want)
			}
		}
		add("bob-2", "bob", "b1", t0.Add(2*time.Hour), 24*time.Hour)
		if has("short") {
			t.Error("an expired session outlived the next sign-in")
		}
		if err := s.DeleteWebSession(ctx, []byte("ana-4")); err != nil || has("ana-4") {
			t.Errorf("DeleteWebSession: %v, still there %v", err, has("ana-4"))
		}
		if err := s.DeleteWebSession(ctx, []byte("none")); err != nil {
			t.Errorf("DeleteWebSession of a missing session: %v", err)
		}
		add("carol-1", "carol", "c1", t0.Add(2*time.Hour), 24*time.Hour)
		n, err := s.KeepWebSessions(ctx, map[string][]byte{"ana": []byte("a2"), "bob": []byte("b1")})
		if err != nil || n != 3 {
			t.Errorf("KeepWebSessions = %d, %v; want ana's 2 (new token) and carol's 1 (removed)", n, err)
		}
		for id, want := range map[string]bool{"ana-2": false, "ana-3": false, "carol-1": false, "bob-2": true} {
			if has(id) != want {
				t.Errorf("after KeepWebSessions: %s present %v, want %v", id, !want, want)
			}
		}
	})
}
