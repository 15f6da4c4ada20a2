package main

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/store"
)

// healthBody is /healthz's JSON answer.
type healthBody struct {
	// Status: "ok" (every bot connected or running), "degraded" (some bot
	// is starting, reconnecting or failed, but not all have failed) or
	// "failed" (every bot has failed: the bridge serves no one and stops).
	Status string      `json:"status"`
	Bots   []healthBot `json:"bots"`
	// Limits say, per agent profile, which resource limits hold (see
	// openLimits): e.g. "memory 4 GiB, 512 processes, CPU 1 (cgroup v1)".
	Limits map[string]string `json:"limits,omitempty"`
	// Storage says whether the database can be written (health_storage.go).
	Storage *healthStorage `json:"storage,omitempty"`
}

// healthBot is one bot's entry (see bridges.BotState).
type healthBot struct {
	Bot      string    `json:"bot"`
	Platform string    `json:"platform"`
	State    string    `json:"state"`
	Since    time.Time `json:"since,omitzero"`
	Reason   string    `json:"reason,omitempty"`
	Remedy   string    `json:"remedy,omitempty"`
	Hint     string    `json:"hint,omitempty"`
	Until    time.Time `json:"until,omitzero"`
	Attempt  int       `json:"attempt,omitempty"`
}

// healthHandler serves /healthz from the bots' states: 200 while at least
// one bot can serve (status ok or degraded), 503 when every bot has
// failed. A degraded bridge stays 200 on purpose: restarting it does not
// help a logged-out or banned bot (a restart loop would even reconnect a
// banned one), and the other bots still work; monitoring reads "status"
// and each bot's "state".
func healthHandler(states func() []bridges.BotStatus) http.Handler {
	return healthHandlerWith(states, nil)
}

// healthHandlerWith is healthHandler that also shows the agent profiles'
// resource limits.
func healthHandlerWith(states func() []bridges.BotStatus, limits map[string]string) http.Handler {
	return healthHandlerStorage(states, limits, nil)
}

// healthHandlerStorage is healthHandlerWith that also shows whether the
// database can be written (storage may be nil).
func healthHandlerStorage(states func() []bridges.BotStatus, limits map[string]string, storage func() store.WriteHealth) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		body := health(states())
		body.Limits = limits
		if storage != nil {
			body.addStorage(storage())
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if body.Status == "failed" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false) // hints are read by people and tools, not put into HTML
		enc.SetIndent("", "  ")
		_ = enc.Encode(body)
	})
}

// health summarises the bots' states.
func health(states []bridges.BotStatus) healthBody {
	body := healthBody{Status: "ok", Bots: make([]healthBot, 0, len(states))}
	failed := 0
	for _, s := range states {
		switch s.State {
		case bridges.ConnConnected, bridges.ConnRunning:
		case bridges.ConnFailed:
			failed++
			body.Status = "degraded"
		default:
			body.Status = "degraded"
		}
		body.Bots = append(body.Bots, healthBot{Bot: s.Bot, Platform: s.Platform, State: string(s.State), Since: s.Since.UTC(),
			Reason: s.Reason, Remedy: s.Remedy, Hint: s.Hint, Until: s.Until.UTC(), Attempt: s.Attempt})
	}
	if failed > 0 && failed == len(states) {
		body.Status = "failed"
	}
	return body
}
