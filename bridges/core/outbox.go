package core

import (
	"context"
	"log/slog"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/delivery"
	"github.com/agentbridge/agentbridge/bridges/metrics"
	"github.com/agentbridge/agentbridge/config"
	"github.com/agentbridge/agentbridge/store"
	"github.com/prometheus/client_golang/prometheus"
)

// outboxHost is the conversation as its outbox (bridges/delivery) sees
// it; its methods run on the worker.
type outboxHost struct{ cv *conversation }

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
func (h outboxHost) RetryOutboxAfter(d time.Duration)     { h.cv.after(d, timerOutbox, "") }
func (h outboxHost) MayPost() bool                        { return h.cv.mayPost() }

func (h outboxHost) TakeUrgent() {
	h.cv.budget.Take(h.cv.core.clock.Now(), h.cv.limits.EditInterval, true)
}

func (h outboxHost) PostNotice(ctx context.Context, text string) error {
	return h.cv.postNotice(ctx, text)
}

func (h outboxHost) EditOrPost(ctx context.Context, ref bridges.MessageRef, m, instead bridges.Message) (bridges.MessageRef, error) {
	return h.cv.editOrPost(ctx, ref, m, instead)
}

// FailedRepliesWindow is how far back OutboxSummary counts replies given
// up.
const FailedRepliesWindow = delivery.FailedRepliesWindow

// OutboxSummary returns, per bot, the final replies waiting to be posted
// (with the oldest one's time) and those given up within
// FailedRepliesWindow: what /healthz, the metrics and the operator page
// show. Bots with neither are left out.
func (c *Core) OutboxSummary(ctx context.Context) ([]store.OutboxBotSummary, error) {
	return delivery.Summary(ctx, c.st, c.clock.Now())
}

// NewOutboxCollector exports the core's OutboxSummary as gauges (see
// metrics.NewOutboxCollector).
func NewOutboxCollector(c *Core) prometheus.Collector {
	return metrics.NewOutboxCollector(c.OutboxSummary, c.clock.Now)
}
