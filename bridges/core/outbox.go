package core

import (
	"context"

	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/store"
	"github.com/prometheus/client_golang/prometheus"
)

// platformBack is a sign that bot's platform answers again — a call to it
// succeeded, an event from it arrived, its adapter reconnected: the
// conversations whose replies wait for a retry post them now
// (delivery.Waiting) instead of at the end of their back-off.
func (c *Core) platformBack(bot string) {
	c.WakeWaiting(bot)
	if bs, ok := c.opts.Ownership.(ownership.BackSignaler); ok { // replies may wait on another replica
		ctx, cancel := context.WithTimeout(context.Background(), ownership.BackSignalTimeout)
		defer cancel()
		bs.PlatformBack(ctx, bot)
	}
}

// WakeWaiting posts now the replies of bot that wait here for its
// platform (delivery.Waiting): a sign that it answers again, seen here or
// by another replica (ownership.BackSignaler).
func (c *Core) WakeWaiting(bot string) {
	if n := c.waiting.Back(bot); n > 0 {
		c.log.Debug("platform answers again: waking the waiting replies", "bot", bot, "conversations", n)
	}
}

// OutboxSummary returns, per bot, the final replies waiting to be posted
// (with the oldest one's time) and those given up within
// delivery.FailedRepliesWindow: what /healthz, the metrics and the operator page
// show. Bots with neither are left out.
func (c *Core) OutboxSummary(ctx context.Context) ([]store.OutboxBotSummary, error) {
	return delivery.Summary(ctx, c.st, c.clock.Now())
}

// NewOutboxCollector exports the core's OutboxSummary as gauges (see
// metrics.NewOutboxCollector).
func NewOutboxCollector(c *Core) prometheus.Collector {
	return metrics.NewOutboxCollector(c.OutboxSummary, c.clock.Now)
}
