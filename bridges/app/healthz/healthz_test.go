package healthz

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// /healthz: JSON per bot; 200 while a bot can serve, 503 when all failed.
func TestHealthz(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	bot := func(name string, s bridges.ConnState) bridges.BotStatus {
		return bridges.BotStatus{Bot: name, Platform: "whatsapp", BotState: bridges.BotState{State: s, Since: since}}
	}
	banned := bot("phone", bridges.ConnFailed)
	banned.Reason, banned.Remedy, banned.Hint = "temporarily banned", bridges.RemedyWait, "wait until the ban ends"
	banned.Until = since.Add(time.Hour)
	tests := []struct {
		name   string
		states []bridges.BotStatus
		code   int
		status string
	}{
		{"no bot started yet", nil, 200, "ok"},
		{"all connected or running", []bridges.BotStatus{bot("a", bridges.ConnConnected), bot("b", bridges.ConnRunning)}, 200, "ok"},
		{"one starting", []bridges.BotStatus{bot("a", bridges.ConnStarting), bot("b", bridges.ConnRunning)}, 200, "degraded"},
		{"one reconnecting", []bridges.BotStatus{bot("a", bridges.ConnReconnecting)}, 200, "degraded"},
		{"one of two failed", []bridges.BotStatus{banned, bot("b", bridges.ConnConnected)}, 200, "degraded"},
		{"all failed", []bridges.BotStatus{banned}, 503, "failed"},
		// A replica standing by for a bot another replica holds is healthy.
		{"standby", []bridges.BotStatus{bot("a", bridges.ConnStandby), bot("b", bridges.ConnConnected)}, 200, "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Handler(func() []bridges.BotStatus { return tt.states }, Sources{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			if rec.Code != tt.code {
				t.Errorf("code %d, want %d", rec.Code, tt.code)
			}
			var body Body
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if body.Status != tt.status || len(body.Bots) != len(tt.states) {
				t.Errorf("body = %+v, want status %q and %d bots", body, tt.status, len(tt.states))
			}
		})
	}
	rec := httptest.NewRecorder()
	Handler(func() []bridges.BotStatus { return []bridges.BotStatus{banned} }, Sources{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	var raw struct {
		Bots []map[string]any `json:"bots"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"bot": "phone", "platform": "whatsapp", "state": "failed", "since": "2026-01-02T03:04:05Z",
		"reason": "temporarily banned", "remedy": "wait", "hint": "wait until the ban ends", "until": "2026-01-02T04:04:05Z"}
	if len(raw.Bots) != 1 || len(raw.Bots[0]) != len(want) {
		t.Fatalf("bots = %v, want %v", raw.Bots, want)
	}
	for k, v := range want {
		if raw.Bots[0][k] != v {
			t.Errorf("%s = %v, want %v", k, raw.Bots[0][k], v)
		}
	}
}

// /healthz lists per bot the replies waiting out an outage and those given
// up in the last day, and says when the store cannot tell.
func TestHealthzReplies(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	states := func() []bridges.BotStatus { return nil }
	replies := func(context.Context) ([]store.OutboxBotSummary, error) {
		return []store.OutboxBotSummary{{Bot: "team", Waiting: 2, OldestWaiting: since}, {Bot: "guild", Failed: 1}}, nil
	}
	rec := httptest.NewRecorder()
	Handler(states, Sources{Replies: replies}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	var raw struct {
		Status  string           `json:"status"`
		Replies []map[string]any `json:"replies"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"bot": "team", "waiting": 2.0, "waiting_since": "2026-01-02T03:04:05Z", "failed_24h": 0.0},
		{"bot": "guild", "waiting": 0.0, "failed_24h": 1.0},
	}
	if rec.Code != 200 || raw.Status != "ok" || fmt.Sprint(raw.Replies) != fmt.Sprint(want) {
		t.Errorf("code %d, body %s; want 200, status ok and replies %v", rec.Code, rec.Body, want)
	}

	broken := func(context.Context) ([]store.OutboxBotSummary, error) { return nil, errors.New("database is locked") }
	rec = httptest.NewRecorder()
	Handler(states, Sources{Replies: broken}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	var body Body
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if body.RepliesError != "database is locked" || body.Replies != nil {
		t.Errorf("body = %+v, want the store's error", body)
	}
}

// A reconnecting bot shows since when (the start of the outage), the
// count of failed attempts and the last error.
func TestHealthzReconnecting(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := bridges.BotStatus{Bot: "team", Platform: "slack", BotState: bridges.BotState{State: bridges.ConnReconnecting,
		Reason: "apps.connections.open: HTTP 503", Attempt: 12, Since: since}}
	rec := httptest.NewRecorder()
	Handler(func() []bridges.BotStatus { return []bridges.BotStatus{s} }, Sources{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	var raw struct {
		Status string           `json:"status"`
		Bots   []map[string]any `json:"bots"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"bot": "team", "platform": "slack", "state": "reconnecting", "since": "2026-01-02T03:04:05Z",
		"reason": "apps.connections.open: HTTP 503", "attempt": float64(12)}
	if rec.Code != http.StatusOK || raw.Status != "degraded" || len(raw.Bots) != 1 || len(raw.Bots[0]) != len(want) {
		t.Fatalf("/healthz = %d %s %v, want 200 degraded with %v", rec.Code, raw.Status, raw.Bots, want)
	}
	for k, v := range want {
		if raw.Bots[0][k] != v {
			t.Errorf("%s = %v, want %v", k, raw.Bots[0][k], v)
		}
	}
}
