package auth

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

const anaToken = "ana-token-0123456789"

// TestSessionChecks: a session cookie is refused when tampered with,
// signed with another key, expired, its user's token changed, or ended on
// the server.
func TestSessionChecks(t *testing.T) {
	ctx := context.Background()
	us, _, err := NewUsers([]config.WebUser{{Name: "ana", Role: config.RoleAdmin, Token: anaToken}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "bridge.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := NewSessions(bytes.Repeat([]byte{7}, 32), us, st, slog.New(slog.DiscardHandler), func() time.Time { return now })
	v, err := s.Issue(ctx, us.ByName("ana"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Check(ctx, v); got == nil || got.User.Name != "ana" || got.CSRF == "" {
		t.Fatalf("check(issued) = %+v", got)
	}
	body, sig, _ := strings.Cut(v, ".")
	tampered := []string{"", v + "x", body + ".AAAA", strings.ToUpper(body[:4]) + body[4:] + "." + sig}
	for _, tv := range tampered {
		if s.Check(ctx, tv) != nil {
			t.Errorf("tampered cookie %q accepted", tv)
		}
	}
	other := NewSessions(bytes.Repeat([]byte{8}, 32), us, st, s.log, s.now)
	if other.Check(ctx, v) != nil {
		t.Error("a cookie signed with another key was accepted")
	}
	now = now.Add(SessionLifetime + time.Second)
	if s.Check(ctx, v) != nil {
		t.Error("an expired session was accepted")
	}
	now = now.Add(-SessionLifetime)
	// A new token for ana ends her sessions.
	us2, _, _ := NewUsers([]config.WebUser{{Name: "ana", Role: config.RoleAdmin, Token: "ana-new-token-0123456"}}, t.TempDir())
	if NewSessions(s.key, us2, st, s.log, s.now).Check(ctx, v) != nil {
		t.Error("a session outlived its user's token change")
	}
	// A session ended on the server is refused although its cookie is
	// still validly signed.
	if err := s.End(ctx, v); err != nil {
		t.Fatal(err)
	}
	if s.Check(ctx, v) != nil {
		t.Error("an ended session was accepted")
	}
}
