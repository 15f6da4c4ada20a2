package reload

import (
	"context"
	"time"

	"github.com/agentbridge/agentbridge/agent/streamjson"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/config"
)

// This file is the Reloader's part of each conversation's worker (a
// worker.ConvHook): the conversation's Replacement, fed with the agent's
// events, checked after each input, holding the people's messages while a
// replacement is due, and !status's line about the config in force.

// Reloader is the core's conversation feature that keeps each worker's
// Replacement: register New() in core.CoreOptions.ConvFeatures.
type Reloader struct{}

// New returns a Reloader.
func New() *Reloader { return &Reloader{} }

var _ worker.ConvFeature = (*Reloader)(nil)

// Attach implements worker.ConvFeature.
func (*Reloader) Attach(c worker.Conv) worker.ConvHook { return &convHook{Conv: c} }

// convHook is one conversation's part of the Reloader; it is the Conv its
// Replacement acts on.
type convHook struct {
	worker.Conv
	repl Replacement
}

var _ Conv = (*convHook)(nil)

// AgentEvent implements worker.ConvHook.
func (h *convHook) AgentEvent(ev streamjson.Event, now time.Time) { h.repl.Note(ev, now) }

// AfterInput implements worker.ConvHook: a due replacement happens at the
// first idle moment.
func (h *convHook) AfterInput(ctx context.Context) { h.repl.Check(ctx, h) }

// HoldsInput implements worker.ConvHook: pending messages wait for the new
// process (Replacement.Holds).
func (h *convHook) HoldsInput() bool { return h.repl.Holds(h.Live()) }

// StatusLine implements worker.ConvHook.
func (h *convHook) StatusLine() string { return StatusLine(h.ConfigGeneration(), h.repl.Due()) }

// Recheck implements Conv.
func (h *convHook) Recheck(d time.Duration) {
	h.After(d, func(ctx context.Context, _ worker.Conv) { h.repl.Check(ctx, h) })
}

// Replacement implements Conv.
func (h *convHook) Replacement() *Replacement { return &h.repl }

// onReload runs on the worker of c for each applied reload: OnReload on
// the Reloader's part of c, or, when no Reloader is one of the core's
// features, c only takes cfg.
func onReload(ctx context.Context, c worker.Conv, cfg *config.Config, respawn, force bool) {
	for _, h := range c.Hooks() {
		if hk, ok := h.(*convHook); ok {
			OnReload(ctx, hk, cfg, respawn, force)
			return
		}
	}
	c.Refresh(cfg)
}
