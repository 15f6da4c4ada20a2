package core

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentbridge/agentbridge/bridges/metrics"
	"github.com/agentbridge/agentbridge/bridges/render"
	"github.com/agentbridge/agentbridge/store"
)

// FailedRepliesWindow is how far back OutboxSummary counts replies given
// up.
const FailedRepliesWindow = 24 * time.Hour

// OutboxSummary returns, per bot, the final replies waiting to be posted
// (with the oldest one's time) and those given up within
// FailedRepliesWindow: what /healthz, the metrics and the operator page
// show. Bots with neither are left out.
func (c *Core) OutboxSummary(ctx context.Context) ([]store.OutboxBotSummary, error) {
	out, err := c.st.OutboxSummary(ctx, c.clock.Now().Add(-FailedRepliesWindow))
	if err != nil {
		return nil, fmt.Errorf("replies waiting or failed: %w", err)
	}
	return out, nil
}

// NewOutboxCollector exports the core's OutboxSummary as gauges (see
// metrics.NewOutboxCollector).
func NewOutboxCollector(c *Core) prometheus.Collector {
	return metrics.NewOutboxCollector(c.OutboxSummary, c.clock.Now)
}

// outboxStatusLine is !status's line about the conversation's replies
// waiting to be posted (kept through a platform outage): how many, since
// when (the oldest's first failed attempt, else when it was produced) and
// the last error; "" when none waits.
func (cv *conversation) outboxStatusLine(ctx context.Context) string {
	rows, err := cv.core.st.PendingOutboxForConversation(ctx, cv.id)
	if err != nil {
		cv.log.Warn("read replies waiting for !status", "err", err)
		return "\n• replies waiting to be posted: unknown (the database could not be read)"
	}
	if len(rows) == 0 {
		return ""
	}
	oldest := rows[0]
	since := oldest.CreatedAt
	if !oldest.FirstFailedAt.IsZero() {
		since = oldest.FirstFailedAt
	}
	line := fmt.Sprintf("\n• replies waiting to be posted: %d since %s (%s ago)", len(rows),
		since.UTC().Format("2006-01-02 15:04:05 UTC"), render.RoundAgo(cv.core.clock.Now().Sub(since)))
	if oldest.LastError != "" {
		line += "; last error: " + oneLine(oldest.LastError, 200)
	}
	return line
}
