// Package healthz is the bridge's /healthz endpoint: the JSON document it
// answers (Body, the contract monitoring and the end-to-end tests read)
// and the handler that fills it from the bridge's parts (Sources).
// bridges/app wires it; nothing here holds state.
package healthz

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/adapters/web/admin"
	"github.com/agentbridge/agentbridge/store"
)

// Body is /healthz's JSON answer.
type Body struct {
	// Status: "ok" (every bot connected or running), "degraded" (some bot
	// is starting, reconnecting or failed, but not all have failed) or
	// "failed" (every bot has failed: the bridge serves no one and stops).
	Status string `json:"status"`
	Bots   []Bot  `json:"bots"`
	// Limits say, per agent profile, which resource limits hold (see
	// sandbox.Enforcement): e.g. "memory 4 GiB, 512 processes, CPU 1 (cgroup v1)".
	Limits map[string]string `json:"limits,omitempty"`
	// Replies are, per bot, the final replies waiting to be posted (a
	// platform outage keeps them until delivery.give_up_after) and those
	// given up in the last 24 hours; bots with neither are left out.
	Replies      []Replies `json:"replies,omitempty"`
	RepliesError string    `json:"replies_error,omitempty"` // the store could not be read
	// Storage says whether the database can be written (storage.go).
	Storage *Storage `json:"storage,omitempty"`
	// Config is the config generation in force and the last refused
	// reload (bridges/app's reloader).
	Config *Config `json:"config,omitempty"`
	// Replica is this process's replica id and the conversations it
	// holds, with config replicas.
	Replica *Replica `json:"replica,omitempty"`
}

// Config is /healthz's view of the config: the generation in force,
// when and by what it took effect, and — until a reload succeeds — the
// problems of the last refused one, each with its line. A refused reload
// does not change "status": the bridge keeps serving with the old config.
type Config struct {
	Generation uint64    `json:"generation"`
	Since      time.Time `json:"since"`
	Trigger    string    `json:"trigger"`
	Refused    []string  `json:"refused,omitempty"`
	RefusedAt  time.Time `json:"refused_at,omitzero"`
	// CheckedAt is when a reload last read the file, whatever came of it.
	CheckedAt time.Time `json:"checked_at,omitzero"`
	// Replicas says which config file this process runs and which other
	// live processes on the same database run a different one.
	Replicas *Replicas `json:"replicas,omitempty"`
}

// Replies is one bot's entry in Replies (see core.Core.OutboxSummary).
type Replies struct {
	Bot           string    `json:"bot"`
	Waiting       int       `json:"waiting"`
	WaitingSince  time.Time `json:"waiting_since,omitzero"` // when the oldest waiting reply was produced
	FailedLastDay int       `json:"failed_24h"`
}

// Bot is one bot's entry (see bridges.BotState). For a reconnecting
// bot, since is the start of the outage (not the last attempt), attempt
// the count of failed attempts in a row and reason the last error.
type Bot struct {
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

// Sources is what /healthz shows besides the bots' states; a nil
// field is left out.
type Sources struct {
	Limits map[string]string // agent profiles' resource limits, by profile
	// Replies reports the bots' replies waiting out an outage or given up.
	Replies func(context.Context) ([]store.OutboxBotSummary, error)
	Storage func() store.WriteHealth  // whether the database can be written
	Config  func() admin.ConfigStatus // the config generation and the last refused reload
	// Replicas says which config file this process and the others on its
	// database run (shown with Config).
	Replicas func() *Replicas
	Replica  func() *Replica // the replica and its conversations
}

// Handler serves /healthz from the bots' states, with what each set
// source of src adds: 200 while at least one bot can serve (status ok or
// degraded), 503 when every bot has failed. A degraded bridge stays 200
// on purpose: restarting it does not help a logged-out or banned bot (a
// restart loop would even reconnect a banned one), and the other bots
// still work; monitoring reads "status" and each bot's "state". A full
// database makes an "ok" bridge "degraded", never "failed".
func Handler(states func() []bridges.BotStatus, src Sources) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := health(states())
		body.Limits = src.Limits
		if src.Replies != nil {
			body.Replies, body.RepliesError = healthOfReplies(r.Context(), src.Replies)
		}
		if src.Storage != nil {
			body.addStorage(src.Storage())
		}
		if src.Config != nil {
			s := src.Config()
			body.Config = &Config{Generation: s.Generation, Since: s.At.UTC(), Trigger: s.Trigger,
				Refused: s.Refused, RefusedAt: s.RefusedAt.UTC(), CheckedAt: s.CheckedAt.UTC()}
			if src.Replicas != nil {
				body.Config.Replicas = src.Replicas()
			}
		}
		if src.Replica != nil {
			body.Replica = src.Replica()
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
func health(states []bridges.BotStatus) Body {
	body := Body{Status: "ok", Bots: make([]Bot, 0, len(states))}
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
		body.Bots = append(body.Bots, Bot{Bot: s.Bot, Platform: s.Platform, State: string(s.State), Since: s.Since.UTC(),
			Reason: s.Reason, Remedy: s.Remedy, Hint: s.Hint, Until: s.Until.UTC(), Attempt: s.Attempt})
	}
	if failed > 0 && failed == len(states) {
		body.Status = "failed"
	}
	return body
}

// healthOfReplies reads the replies waiting or failed for /healthz.
func healthOfReplies(ctx context.Context, replies func(context.Context) ([]store.OutboxBotSummary, error)) ([]Replies, string) {
	sums, err := replies(ctx)
	if err != nil {
		return nil, err.Error()
	}
	out := make([]Replies, 0, len(sums))
	for _, s := range sums {
		out = append(out, Replies{Bot: s.Bot, Waiting: s.Waiting, WaitingSince: s.OldestWaiting.UTC(), FailedLastDay: s.Failed})
	}
	return out, ""
}
