package healthz

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// /healthz's storage section: "ok", or "full" with since and the last
// error, which makes an ok bridge degraded (still 200: a restart frees no
// space) and leaves a failed one failed (503).
func TestHealthzStorage(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	full := store.WriteHealth{Full: true, Since: since, LastError: "commit: database or disk is full", Failures: 3}
	up := []bridges.BotStatus{{Bot: "a", Platform: "slack", BotState: bridges.BotState{State: bridges.ConnConnected}}}
	down := []bridges.BotStatus{{Bot: "a", Platform: "slack", BotState: bridges.BotState{State: bridges.ConnFailed}}}
	tests := []struct {
		name    string
		bots    []bridges.BotStatus
		h       store.WriteHealth
		code    int
		status  string
		storage Storage
	}{
		{"writable", up, store.WriteHealth{Failures: 3}, 200, "ok", Storage{State: "ok", FailedWrites: 3}},
		{"full", up, full, 200, "degraded", Storage{State: "full", Since: since, Error: full.LastError, FailedWrites: 3}},
		{"full and every bot failed", down, full, 503, "failed", Storage{State: "full", Since: since, Error: full.LastError, FailedWrites: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Handler(func() []bridges.BotStatus { return tt.bots }, Sources{Storage: func() store.WriteHealth { return tt.h }}).
				ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			var body Body
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if rec.Code != tt.code || body.Status != tt.status || body.Storage == nil || *body.Storage != tt.storage {
				t.Errorf("got %d %q %+v, want %d %q %+v", rec.Code, body.Status, body.Storage, tt.code, tt.status, tt.storage)
			}
		})
	}
}
