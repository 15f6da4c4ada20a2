package connstate_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/connstate"
	"github.com/agentbridge/agentbridge/config"
)

// TestBoardSinceStartOfOutage: a bot that keeps reconnecting stays
// reconnecting since its first failed attempt, with the last attempt's
// reason; the change is logged once, not per attempt; connected again,
// it is connected since then.
func TestBoardSinceStartOfOutage(t *testing.T) {
	var logs bytes.Buffer
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	b := connstate.New(slog.New(slog.NewTextHandler(&logs, nil)), func() time.Time { return now })
	bots := []*config.Bot{{Name: "chat", Platform: "slack"}, {Name: "phone", Platform: "whatsapp"}}
	b.Set("phone", bridges.BotState{State: bridges.ConnConnected})
	now = now.Add(time.Minute)
	lost := now
	for i := 1; i <= 3; i++ {
		b.Set("phone", bridges.BotState{State: bridges.ConnReconnecting, Reason: "dial: refused", Attempt: i})
		now = now.Add(2 * time.Minute)
	}
	got := b.Statuses(bots)
	if len(got) != 1 || got[0].Bot != "phone" || got[0].Platform != "whatsapp" || !got[0].Since.Equal(lost) || got[0].Attempt != 3 {
		t.Fatalf("statuses = %+v, want phone reconnecting since %v at attempt 3", got, lost)
	}
	if n := strings.Count(logs.String(), "bot lost its connection"); n != 1 {
		t.Errorf("the outage logged %d times, want once", n)
	}
	b.Set("phone", bridges.BotState{State: bridges.ConnConnected})
	if s := b.Statuses(bots)[0]; s.State != bridges.ConnConnected || !s.Since.Equal(now) {
		t.Errorf("connected again: %+v, want since %v", s, now)
	}
}

// TestBoardFailedIsFinal: a failed bot stays failed whatever its adapter
// reports after; Failed keeps a Failure's reason and remedy, and gives
// any other error a restart remedy.
func TestBoardFailedIsFinal(t *testing.T) {
	b := connstate.New(slog.New(slog.DiscardHandler), time.Now)
	bots := []*config.Bot{{Name: "chat", Platform: "slack"}}
	f := &bridges.Failure{Reason: "token revoked", Remedy: bridges.RemedyRelink, Hint: "set a new token", Err: errors.New("invalid_auth")}
	b.Set("chat", connstate.Failed(f))
	b.Set("chat", bridges.BotState{State: bridges.ConnConnected})
	if s := b.Statuses(bots)[0]; s.State != bridges.ConnFailed || s.Reason != "token revoked" || s.Remedy != bridges.RemedyRelink {
		t.Errorf("state = %+v, want failed with the Failure's reason and remedy", s)
	}
	if s := connstate.Failed(errors.New("boom")); s.State != bridges.ConnFailed || s.Reason != "boom" || s.Remedy != bridges.RemedyRestart {
		t.Errorf("Failed(plain error) = %+v", s)
	}
	if s := connstate.Failed(nil); s.Reason == "" {
		t.Errorf("Failed(nil) = %+v, want a reason", s)
	}
}
