package core

import (
	"context"
	"log/slog"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/agents"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/worker"
	"github.com/agentbridge/agentbridge/bridges/core/worker/fallback"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
)

// host is the core as its workers reach it (worker.Host): the one value
// the core gives each worker it makes.
type host struct {
	c    *Core
	opts *worker.Options
}

var _ worker.Host = host{}

// workerOptions are the parts of opts every worker shares.
func workerOptions(opts CoreOptions) *worker.Options {
	o := &worker.Options{
		Clock: opts.Clock, Metrics: opts.Metrics, QueueCapacity: opts.QueueCapacity, SlowHandler: opts.SlowHandler,
		OutboxBackoff: opts.OutboxBackoff, RetireIdleAfter: opts.RetireIdleAfter, Tools: opts.Tools,
		Commands: opts.Commands, Cards: opts.Cards, Files: opts.Files, Observer: opts.Observer, Spend: opts.Spend,
		Ownership: opts.Ownership, ConvFeatures: opts.ConvFeatures, Access: opts.Access,
	}
	if opts.Tools != nil {
		o.ToolNames = opts.Tools.List()
	}
	if opts.Scheduler != nil {
		o.RunLabel = opts.Scheduler.RunLabel
	}
	if o.Cards == nil {
		o.Cards = fallback.Cards{} // fails closed
	}
	if o.Observer == nil {
		o.Observer = fallback.Observer{}
	}
	return o
}

func (h host) Options() *worker.Options                         { return h.opts }
func (h host) Log() *slog.Logger                                { return h.c.log }
func (h host) Config() *config.Config                           { return h.c.cfg() }
func (h host) ConfigGeneration() config.Generation              { return h.c.ConfigGeneration() }
func (h host) RunCtx() context.Context                          { return h.c.runCtx }
func (h host) Go(f func())                                      { h.c.workers.Go(f) }
func (h host) Read(f func()) bool                               { return h.c.readers.Go(f) }
func (h host) Pool() agents.Pool                                { return h.c.pool }
func (h host) Spawner() agents.Spawner                          { return h.c.spawner() }
func (h host) Store() *store.Store                              { return h.c.st }
func (h host) Waiting() *delivery.Waiting                       { return &h.c.waiting }
func (h host) Platform(bot string) bridges.Platform             { return h.c.platform(bot) }
func (h host) PlatformBack(bot string)                          { h.c.platformBack(bot) }
func (h host) BotStates() []bridges.BotStatus                   { return h.c.BotStates() }
func (h host) Draining() bool                                   { return h.c.draining.Load() }
func (h host) Retire(w worker.Worker) bool                      { return h.c.retire(w) }
func (h host) ReplyTo(conv store.Conversation, in worker.Input) { h.c.replyTo(conv, in) }

// Drop stops w and its agent from a goroutine of the core (dropWorker):
// w may be the caller.
func (h host) Drop(w worker.Worker) {
	c := h.c
	c.workers.Go(func() { c.dropWorker(context.WithoutCancel(c.runCtx), w) })
}

func (h host) Worker(key bridges.ConversationKey) (worker.Worker, bool) {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	w, ok := h.c.convs[key]
	return w, ok
}

func (h host) Deliver(conv store.Conversation, in worker.Input) error {
	_, err := h.c.deliver(conv, in)
	return err
}
