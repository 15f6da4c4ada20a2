package app

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/web"
	"github.com/agentbridge/agentbridge/store"
)

// Health is /healthz's JSON answer.
type Health struct {
	// Status: "ok" (every bot connected or running), "degraded" (some bot
	// is starting, reconnecting or failed, but not all have failed) or
	// "failed" (every bot has failed: the bridge serves no one and stops).
	Status string      `json:"status"`
	Bots   []HealthBot `json:"bots"`
	// Limits say, per agent profile, which resource limits hold (see
	// openLimits): e.g. "memory 4 GiB, 512 processes, CPU 1 (cgroup v1)".
	Limits map[string]string `json:"limits,omitempty"`
	// Replies are, per bot, the final replies waiting to be posted (a
	// platform outage keeps them until delivery.give_up_after) and those
	// given up in the last 24 hours; bots with neither are left out.
	Replies      []HealthReplies `json:"replies,omitempty"`
	RepliesError string          `json:"replies_error,omitempty"` // the store could not be read
	// Storage says whether the database can be written (health_storage.go).
	Storage *HealthStorage `json:"storage,omitempty"`
	// Config is the config generation in force and the last refused
	// reload (reload.go).
	Config *HealthConfig `json:"config,omitempty"`
	// Replica is this process's replica id and the conversations it
	// holds, with config replicas (replicas.go).
	Replica *HealthReplica `json:"replica,omitempty"`
}

// HealthConfig is /healthz's view of the config: the generation in force,
// when and by what it took effect, and — until a reload succeeds — the
// problems of the last refused one, each with its line. A refused reload
// does not change "status": the bridge keeps serving with the old config.
type HealthConfig struct {
	Generation uint64    `json:"generation"`
	Since      time.Time `json:"since"`
	Trigger    string    `json:"trigger"`
	Refused    []string  `json:"refused,omitempty"`
	RefusedAt  time.Time `json:"refused_at,omitzero"`
	// CheckedAt is when a reload last read the file, whatever came of it.
	CheckedAt time.Time `json:"checked_at,omitzero"`
	// Replicas says which config file this process runs and which other
	// live processes on the same database run a different one
	// (replica_config.go).
	Replicas *HealthReplicas `json:"replicas,omitempty"`
}

// HealthReplies is one bot's entry in Replies (see bridges.Core.OutboxSummary).
type HealthReplies struct {
	Bot           string    `json:"bot"`
	Waiting       int       `json:"waiting"`
	WaitingSince  time.Time `json:"waiting_since,omitzero"` // when the oldest waiting reply was produced
	FailedLastDay int       `json:"failed_24h"`
}

// repliesFunc reports the bots' waiting and failed replies.
type repliesFunc func(context.Context) ([]store.OutboxBotSummary, error)

// HealthBot is one bot's entry (see bridges.BotState). For a reconnecting
// bot, since is the start of the outage (not the last attempt), attempt
// the count of failed attempts in a row and reason the last error.
type HealthBot struct {
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
	return healthHandlerWith(states, healthSources{})
}

// healthSources is what /healthz shows besides the bots' states; a nil
// field is left out.
type healthSources struct {
	limits  map[string]string        // agent profiles' resource limits
	replies repliesFunc              // replies waiting out an outage or given up
	storage func() store.WriteHealth // whether the database can be written
	config  func() web.ConfigStatus  // the config generation and the last refused reload
	// replicas says which config file this process and the others on its
	// database run (shown with config).
	replicas func() *HealthReplicas
	replica  func() *HealthReplica // the replica and its conversations
}

// healthHandlerWith is healthHandler that also shows the agent profiles'
// resource limits, the replies waiting or failed and whether the database
// can be written (each when its source is set).
func healthHandlerWith(states func() []bridges.BotStatus, src healthSources) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := health(states())
		body.Limits = src.limits
		if src.replies != nil {
			body.Replies, body.RepliesError = healthOfReplies(r.Context(), src.replies)
		}
		if src.storage != nil {
			body.addStorage(src.storage())
		}
		if src.config != nil {
			s := src.config()
			body.Config = &HealthConfig{Generation: s.Generation, Since: s.At.UTC(), Trigger: s.Trigger,
				Refused: s.Refused, RefusedAt: s.RefusedAt.UTC(), CheckedAt: s.CheckedAt.UTC()}
			if src.replicas != nil {
				body.Config.Replicas = src.replicas()
			}
		}
		if src.replica != nil {
			body.Replica = src.replica()
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
func health(states []bridges.BotStatus) Health {
	body := Health{Status: "ok", Bots: make([]HealthBot, 0, len(states))}
	failed := 0
	for _, s := range states {
		switch s.State {
		case bridges.ConnConnected, bridges.ConnRunning, bridges.ConnStandby: // a standby replica serves through the holder
		case bridges.ConnFailed:
			failed++
			body.Status = "degraded"
		default:
			body.Status = "degraded"
		}
		body.Bots = append(body.Bots, HealthBot{Bot: s.Bot, Platform: s.Platform, State: string(s.State), Since: s.Since.UTC(),
			Reason: s.Reason, Remedy: s.Remedy, Hint: s.Hint, Until: s.Until.UTC(), Attempt: s.Attempt})
	}
	if failed > 0 && failed == len(states) {
		body.Status = "failed"
	}
	return body
}

// healthOfReplies reads the replies waiting or failed for /healthz.
func healthOfReplies(ctx context.Context, replies repliesFunc) ([]HealthReplies, string) {
	sums, err := replies(ctx)
	if err != nil {
		return nil, err.Error()
	}
	out := make([]HealthReplies, 0, len(sums))
	for _, s := range sums {
		out = append(out, HealthReplies{Bot: s.Bot, Waiting: s.Waiting, WaitingSince: s.OldestWaiting.UTC(), FailedLastDay: s.Failed})
	}
	return out, ""
}
