package core

import (
	"context"
	"log/slog"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
	"github.com/prometheus/client_golang/prometheus"
)

var _ delivery.Host = outboxHost{}

func (h outboxHost) Log() *slog.Logger                    { return h.cv.log }
func (h outboxHost) ConvID() string                       { return h.cv.id }
func (h outboxHost) Bot() *config.Bot                     { return h.cv.bot }
func (h outboxHost) Platform() bridges.Platform           { return h.cv.platform }
func (h outboxHost) Limits() bridges.Limits               { return h.cv.limits }
func (h outboxHost) Now() time.Time                       { return h.cv.core.clock.Now() }
func (h outboxHost) Metrics() *metrics.Metrics            { return h.cv.core.opts.Metrics }
func (h outboxHost) GiveUpAfter() time.Duration           { return delivery.GiveUpAfter(h.cv.core.cfg()) }
func (h outboxHost) Notice(ctx context.Context, t string) { h.cv.notice(ctx, t) }
func (h outboxHost) MayPost() bool                        { return h.cv.mayPost() }

func (h outboxHost) PlatformBack() { h.cv.core.platformBack(h.cv.bot.Name) }

// RetryOutboxAfter arms the outbox timer and has the first sign that the
// platform is back (platformBack) wake the outbox sooner.
func (h outboxHost) RetryOutboxAfter(d time.Duration) {
	cv := h.cv
	cv.after(d, timerOutbox, "")
	q := cv.q
	cv.core.waiting.Add(cv.bot.Name, cv.id, func() {
		_ = q.Push(inCall{func(ctx context.Context, cv *conversation) { cv.outbox.Wake(ctx) }}) // a full or closed queue: the timer still runs
	})
	if bs, ok := cv.core.opts.Ownership.(ownership.BackSignaler); ok { // the sign may come to another replica
		ctx, cancel := context.WithTimeout(context.Background(), backSignalTimeout)
		defer cancel()
		bs.WaitingFor(ctx, cv.bot.Name)
	}
}

// backSignalTimeout bounds a signal about a platform's return to the
// other replicas (ownership.BackSignaler).
const backSignalTimeout = 2 * time.Second

// platformBack is a sign that bot's platform answers again — a call to it
// succeeded, an event from it arrived, its adapter reconnected: the
// conversations whose replies wait for a retry post them now
// (delivery.Waiting) instead of at the end of their back-off.
func (c *Core) platformBack(bot string) {
	c.WakeWaiting(bot)
	if bs, ok := c.opts.Ownership.(ownership.BackSignaler); ok { // replies may wait on another replica
		ctx, cancel := context.WithTimeout(context.Background(), backSignalTimeout)
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

func (h outboxHost) TakeUrgent() {
	h.cv.screen.Take(true)
}

func (h outboxHost) PostNotice(ctx context.Context, text string) error {
	return h.cv.postNotice(ctx, text)
}

func (h outboxHost) EditOrPost(ctx context.Context, ref bridges.MessageRef, m, instead bridges.Message) (bridges.MessageRef, error) {
	return h.cv.screen.EditOrPost(ctx, ref, m, instead)
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
