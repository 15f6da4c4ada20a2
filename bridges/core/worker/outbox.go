package worker

import (
	"context"
	"log/slog"
	"time"

	"github.com/agentbridge/agentbridge/bridges"
	"github.com/agentbridge/agentbridge/bridges/core/delivery"
	"github.com/agentbridge/agentbridge/bridges/core/metrics"
	"github.com/agentbridge/agentbridge/bridges/core/ownership"
	"github.com/agentbridge/agentbridge/config"
)

var _ delivery.Host = outboxHost{}

func (h outboxHost) Log() *slog.Logger                    { return h.cv.log }
func (h outboxHost) ConvID() string                       { return h.cv.id }
func (h outboxHost) Bot() *config.Bot                     { return h.cv.bot }
func (h outboxHost) Platform() bridges.Platform           { return h.cv.platform }
func (h outboxHost) Limits() bridges.Limits               { return h.cv.limits }
func (h outboxHost) Now() time.Time                       { return h.cv.opts.Clock.Now() }
func (h outboxHost) Metrics() *metrics.Metrics            { return h.cv.opts.Metrics }
func (h outboxHost) GiveUpAfter() time.Duration           { return delivery.GiveUpAfter(h.cv.host.Config()) }
func (h outboxHost) Notice(ctx context.Context, t string) { h.cv.notice(ctx, t) }
func (h outboxHost) MayPost() bool                        { return h.cv.mayPost() }
func (h outboxHost) PlatformBack()                        { h.cv.host.PlatformBack(h.cv.bot.Name) }

// RetryOutboxAfter arms the outbox timer and has the first sign that the
// platform is back (platformBack) wake the outbox sooner.
func (h outboxHost) RetryOutboxAfter(d time.Duration) {
	cv := h.cv
	cv.timers.After(d, timerKey{timerOutbox, ""})
	q := cv.q
	cv.host.Waiting().Add(cv.bot.Name, cv.id, func() {
		_ = q.Push(inCall{func(ctx context.Context, cv *conversation) { cv.outbox.Wake(ctx) }}) // a full or closed queue: the timer still runs
	})
	if bs, ok := cv.opts.Ownership.(ownership.BackSignaler); ok { // the sign may come to another replica
		ctx, cancel := context.WithTimeout(context.Background(), ownership.BackSignalTimeout)
		defer cancel()
		bs.WaitingFor(ctx, cv.bot.Name)
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
